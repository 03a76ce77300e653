package admission

import (
	"strings"
	"testing"
	"time"
)

// Once an item of a group is refused in a pass, the group's later items are
// not asked; other groups and ungrouped items still are.
func TestReleaseSkipsARefusedGroup(t *testing.T) {
	now := time.Unix(100, 0)
	c := NewCore[string](Options{MaxLength: 16, MaxWait: time.Minute})
	for _, g := range []struct{ name, group string }{{"a1", "a"}, {"b1", "b"}, {"a2", "a"}, {"u1", ""}, {"b2", "b"}, {"u2", ""}} {
		if _, err := c.Push(&Item[string]{ISLTokens: 10, Value: g.name, Group: g.group}, now); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	got := c.Release(now, func(it *Item[string]) bool {
		asked = append(asked, it.Value)
		return it.Value == "b1" || it.Value == "u2" // group a is full; b has room for one, then not
	})
	want := "b1 u1 b2 u2"
	if s := strings.Join(asked, " "); s != "a1 "+want {
		t.Fatalf("asked %q, want %q", s, "a1 "+want)
	}
	if len(got) != 2 || got[0].Value != "b1" || got[1].Value != "u2" {
		t.Fatalf("released %v", got)
	}
	// a2 was skipped, not refused for good: the next pass asks it.
	asked = nil
	c.Release(now, func(it *Item[string]) bool { asked = append(asked, it.Value); return true })
	if s := strings.Join(asked, " "); s != "a1 a2 u1 b2" {
		t.Fatalf("second pass asked %q", s)
	}
}
