package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// model is a naive reference queue: a slice sorted on demand. The Core must
// behave exactly like it on any operation sequence.
type model struct {
	max   int
	wait  time.Duration
	items []*mItem
	seq   int
	last  time.Time
}

type mItem struct {
	name     string
	prio     int
	seq      int
	tokens   int
	deadline time.Time
}

func (m *model) sorted() []*mItem {
	s := slices.Clone(m.items)
	slices.SortStableFunc(s, func(a, b *mItem) int {
		if a.prio != b.prio {
			return b.prio - a.prio
		}
		return a.seq - b.seq
	})
	return s
}

func (m *model) drop(x *mItem) {
	m.items = slices.DeleteFunc(m.items, func(y *mItem) bool { return y == x })
}

func (m *model) push(name string, prio, tokens int, now time.Time) (evicted string, full bool) {
	if len(m.items) >= m.max {
		var v *mItem
		for _, x := range m.items {
			if x.prio < 0 && x.prio < prio && (v == nil || x.prio < v.prio || x.prio == v.prio && x.seq > v.seq) {
				v = x
			}
		}
		if v == nil {
			return "", true
		}
		m.drop(v)
		evicted = v.name
	}
	if now.Before(m.last) {
		now = m.last
	}
	m.last = now
	m.seq++
	m.items = append(m.items, &mItem{name, prio, m.seq, max(tokens, 0), now.Add(m.wait)})
	return evicted, false
}

func (m *model) release(now time.Time, pred func(string) bool) []string {
	var out []string
	for _, x := range m.sorted() {
		if now.Before(x.deadline) && pred(x.name) {
			m.drop(x)
			out = append(out, x.name)
		}
	}
	return out
}

func (m *model) expire(now time.Time) []string {
	var out []string
	for _, x := range m.sorted() {
		if !now.Before(x.deadline) {
			m.drop(x)
			out = append(out, x.name)
		}
	}
	return out
}

func (m *model) state() string {
	tok := 0
	var next time.Time
	for i, x := range m.items {
		tok += x.tokens
		if i == 0 || x.deadline.Before(next) {
			next = x.deadline
		}
	}
	return fmt.Sprintf("len=%d tok=%d next=%v", len(m.items), tok, next)
}

func coreState(c *Core[string]) string {
	next, _ := c.NextDeadline()
	return fmt.Sprintf("len=%d tok=%d next=%v", c.Len(), c.PendingTokens(), next)
}

// runOps drives a Core and the model with the same byte-coded operations and
// returns the Core's trace; it fails t on the first divergence.
func runOps(t testing.TB, ops []byte) string {
	const maxLen = 6
	c := NewCore[string](Options{MaxLength: maxLen, MaxWait: 50 * time.Millisecond, Order: "fcfs"}) // the model is FIFO
	m := &model{max: maxLen, wait: 50 * time.Millisecond}
	byName := map[string]*Item[string]{}
	var trace strings.Builder
	now := t0
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%5, int(ops[i+1])
		now = now.Add(time.Duration(arg%7) * time.Millisecond)
		var got, want string
		switch op {
		case 0, 1: // push; now may step back to exercise the clamp
			name, prio, pushAt := fmt.Sprint("i", i), arg%5-2, now.Add(-time.Duration(arg%3)*time.Millisecond)
			it := &Item[string]{Priority: prio, ISLTokens: arg - 20, Value: name}
			ev, err := c.Push(it, pushAt)
			got = fmt.Sprintf("push %s ev=%s err=%v", name, nameOf(ev), err != nil)
			mev, full := m.push(name, prio, arg-20, pushAt)
			want = fmt.Sprintf("push %s ev=%s err=%v", name, mev, full)
			if err == nil {
				byName[name] = it
			}
		case 2: // release with a budget and a per-item rule
			budget := arg % 4
			rule := func(name string) bool { return len(name)%2 == arg%2 || arg%3 == 0 }
			var calls, mcalls []string
			rel := c.Release(now, func(it *Item[string]) bool {
				n := it.Value
				calls = append(calls, n)
				ok := budget > 0 && rule(n)
				if ok {
					budget--
				}
				return ok
			})
			budget = arg % 4
			mrel := m.release(now, func(n string) bool {
				mcalls = append(mcalls, n)
				ok := budget > 0 && rule(n)
				if ok {
					budget--
				}
				return ok
			})
			got = fmt.Sprintf("release %s calls %v", names(rel), calls)
			want = fmt.Sprintf("release %s calls %v", strings.Join(mrel, ","), mcalls)
		case 3:
			got, want = "expire "+names(c.Expire(now)), "expire "+strings.Join(m.expire(now), ",")
		case 4: // remove the arg-th queued item of the model
			if len(m.items) == 0 {
				continue
			}
			x := m.items[arg%len(m.items)]
			m.drop(x)
			got, want = fmt.Sprint("remove ", c.Remove(byName[x.name])), "remove true"
		}
		got += " " + coreState(c)
		want += " " + m.state()
		if got != want {
			t.Fatalf("op %d diverged:\ncore  %s\nmodel %s", i/2, got, want)
		}
		trace.WriteString(got + "\n")
	}
	return trace.String()
}

func nameOf(it *Item[string]) string {
	if it == nil {
		return ""
	}
	return it.Value
}

func TestCoreMatchesModelAndIsDeterministic(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		ops := make([]byte, 400)
		for i := range ops {
			ops[i] = byte(r.IntN(256))
		}
		if a, b := runOps(t, ops), runOps(t, ops); a != b {
			t.Fatalf("seed %d: two runs of the same operations differ", seed)
		}
	}
}

func FuzzCoreModel(f *testing.F) {
	f.Add([]byte{0, 3, 0, 9, 2, 6, 3, 1})
	f.Add([]byte{0, 0, 0, 1, 1, 2, 0, 3, 1, 4, 0, 5, 0, 6, 0, 7, 4, 1, 2, 3, 3, 200})
	f.Fuzz(func(t *testing.T, ops []byte) { runOps(t, ops) })
}
