package admission

import (
	"strings"
	"testing"
	"time"
)

// Once canDispatch refuses an item for its whole group, the group's later
// items are not asked in that pass; other groups, ungrouped items, and a
// group refused item by item still are.
func TestReleaseSkipsARefusedGroup(t *testing.T) {
	now := time.Unix(100, 0)
	c := NewCore[string](Options{MaxLength: 16, MaxWait: time.Minute})
	for _, g := range []struct{ name, group string }{{"a1", "a"}, {"b1", "b"}, {"a2", "a"}, {"c1", "c"}, {"u1", ""},
		{"c2", "c"}, {"b2", "b"}, {"u2", ""}} {
		if _, err := c.Push(&Item[string]{ISLTokens: 10, Value: g.name, Group: g.group}, now); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	got := c.Release(now, func(it *Item[string]) bool {
		asked = append(asked, it.Value)
		switch it.Value {
		case "b1", "u2":
			return true
		case "a1", "b2": // a is full; b had room for one, then not
			it.RefuseGroup()
		}
		return false // c1: refused on its own, not for its group
	})
	if s := strings.Join(asked, " "); s != "a1 b1 c1 u1 c2 b2 u2" {
		t.Fatalf("asked %q", s)
	}
	if len(got) != 2 || got[0].Value != "b1" || got[1].Value != "u2" {
		t.Fatalf("released %v", got)
	}
	// a2 was skipped, not refused for good: the next pass asks it.
	asked = nil
	c.Release(now, func(it *Item[string]) bool { asked = append(asked, it.Value); return true })
	if s := strings.Join(asked, " "); s != "a1 a2 c1 u1 c2 b2" {
		t.Fatalf("second pass asked %q", s)
	}
}

// Pass is the same for every item asked in one Release pass, differs
// between passes and between Cores, and is 0 outside a pass.
func TestItemPass(t *testing.T) {
	a, b := NewCore[int](Options{}), NewCore[int](Options{})
	t0 := time.Unix(0, 0)
	var items []*Item[int]
	for i := range 3 {
		it := &Item[int]{Value: i}
		items = append(items, it)
		core := a
		if i == 2 {
			core = b
		}
		if _, err := core.Push(it, t0); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int]uint64{}
	ask := func(it *Item[int]) bool { seen[it.Value] = it.Pass(); return false }
	a.Release(t0, ask)
	if seen[0] == 0 || seen[0] != seen[1] {
		t.Fatalf("one pass gave passes %d and %d", seen[0], seen[1])
	}
	first := seen[0]
	a.Release(t0, ask)
	b.Release(t0, ask)
	if seen[0] == first || seen[2] == seen[0] || seen[2] == 0 {
		t.Fatalf("passes not distinct: first %d, second %d, other core %d", first, seen[0], seen[2])
	}
	if p := items[0].Pass(); p != 0 {
		t.Fatalf("Pass outside a pass = %d, want 0", p)
	}
}
