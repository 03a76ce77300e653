package admission

import (
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// ms is a duration in milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// TestAgingOrder: with LateAfter 10 ms and MaxWait 60 ms (urgent from 50 ms),
// a request waiting 10 ms or more goes after those waiting less, and one
// waiting 50 ms or more goes first again; arrival order holds within a tier,
// and under wspt the work class still comes first.
func TestAgingOrder(t *testing.T) {
	doc, short := 12000, 200
	tests := []struct {
		name  string
		order string
		late  time.Duration
		push  []int // push time (ms) of each item, in order
		items []*Item[string]
		now   int
		want  string
	}{
		{"nobody late: arrival order", v1.QueueFCFS, ms(10), []int{0, 1, 2},
			[]*Item[string]{item("a", 0), item("b", 0), item("c", 0)}, 9, "a,b,c"},
		{"late ones yield to the on-time", v1.QueueFCFS, ms(10), []int{0, 1, 5},
			[]*Item[string]{item("a", 0), item("b", 0), item("c", 0)}, 12, "c,a,b"},
		{"every one late: arrival order", v1.QueueFCFS, ms(10), []int{0, 1, 2},
			[]*Item[string]{item("a", 0), item("b", 0), item("c", 0)}, 30, "a,b,c"},
		{"urgent goes first again", v1.QueueFCFS, ms(10), []int{0, 20, 45},
			[]*Item[string]{item("old", 0), item("late", 0), item("new", 0)}, 50, "old,new,late"},
		{"off: arrival order whatever the wait", v1.QueueFCFS, 0, []int{0, 1, 5},
			[]*Item[string]{item("a", 0), item("b", 0), item("c", 0)}, 12, "a,b,c"},
		{"priority before tier", v1.QueueFCFS, ms(10), []int{0, 5},
			[]*Item[string]{item("late-vip", 1), item("new", 0)}, 12, "late-vip,new"},
		{"wspt: tiers within a class", v1.QueueWSPT, ms(10), []int{0, 1, 5},
			[]*Item[string]{work("doc", 0, doc), work("doc2", 0, doc), work("doc3", 0, doc)}, 12, "doc3,doc,doc2"},
		{"wspt: class before tier", v1.QueueWSPT, ms(10), []int{0, 5},
			[]*Item[string]{work("late-short", 0, short), work("doc", 0, doc)}, 12, "late-short,doc"},
		{"wspt: an on-time short passes a late one", v1.QueueWSPT, ms(10), []int{0, 1, 5},
			[]*Item[string]{work("doc", 0, doc), work("short", 0, short), work("short2", 0, short)}, 12, "short2,short,doc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[string](Options{Order: tt.order, MaxWait: ms(60), LateAfter: tt.late})
			for i, it := range tt.items {
				if ev, err := c.Push(it, at(tt.push[i])); err != nil || ev != nil {
					t.Fatalf("push %s: evicted %v, err %v", it.Value, ev, err)
				}
			}
			var got []*Item[string]
			for c.Len() > 0 {
				out := c.Release(at(tt.now), oneSlot())
				if len(out) == 0 {
					t.Fatalf("nothing released with %d queued", c.Len())
				}
				got = append(got, out...)
			}
			if s := names(got); s != tt.want {
				t.Errorf("released %q at %d ms, want %q", s, tt.now, tt.want)
			}
		})
	}
}

// TestAgingExpiryUnchanged: tiers reorder releases, never the timeout, which
// still takes the oldest first.
func TestAgingExpiryUnchanged(t *testing.T) {
	c := NewCore[string](Options{Order: v1.QueueFCFS, MaxWait: ms(60), LateAfter: ms(10)})
	pushAll(t, c, item("a", 0), item("b", 0))
	if got := names(c.Expire(at(60))); got != "a" {
		t.Fatalf("expired %q at 60 ms, want a", got)
	}
}

func TestAgingTiers(t *testing.T) {
	g := Aging{LateAfter: ms(10), MaxWait: ms(60)} // urgent from 50 ms
	tests := []struct {
		waited int
		tier   int
		next   int // ms after enqueue of the next change; -1: none
	}{
		{0, tierOnTime, 10},
		{9, tierOnTime, 10},
		{10, tierLate, 50},
		{49, tierLate, 50},
		{50, tierUrgent, -1},
		{70, tierUrgent, -1},
	}
	for _, tt := range tests {
		now := at(tt.waited)
		if got := g.tier(now, at(0)); got != tt.tier {
			t.Errorf("waited %d ms: tier %d, want %d", tt.waited, got, tt.tier)
		}
		want := time.Time{}
		if tt.next >= 0 {
			want = at(tt.next)
		}
		if got := g.NextChange(now, at(0)); !got.Equal(want) {
			t.Errorf("waited %d ms: next change %v, want %v", tt.waited, got, want)
		}
	}
	for _, off := range []Aging{{MaxWait: ms(60)}, {LateAfter: ms(50), MaxWait: ms(60)}} {
		if off.On() || off.tier(at(55), at(0)) != tierOnTime || !off.NextChange(at(0), at(0)).IsZero() {
			t.Errorf("%+v: want tiers off (LateAfter zero or not under the urgent mark)", off)
		}
	}
}

func TestRankBeforeAt(t *testing.T) {
	g := Aging{LateAfter: ms(10), MaxWait: ms(60)}
	r := func(prio, class, enq int) Rank { return Rank{Priority: prio, Class: class, Enqueued: at(enq)} }
	tests := []struct {
		name string
		a, b Rank
		now  int
		off  bool // tiers off
		want bool
	}{
		{"older first while both on time", r(0, 5, 0), r(0, 5, 3), 5, false, true},
		{"late yields to on time", r(0, 5, 0), r(0, 5, 3), 11, false, false},
		{"on time before late", r(0, 5, 3), r(0, 5, 0), 11, false, true},
		{"urgent before on time", r(0, 5, 0), r(0, 5, 45), 50, false, true},
		{"class before tier", r(0, 4, 0), r(0, 5, 3), 11, false, true},
		{"priority before tier", r(1, 5, 0), r(0, 5, 3), 11, false, true},
		{"no tiers: arrival", r(0, 5, 0), r(0, 5, 3), 11, true, true},
	}
	for _, tt := range tests {
		gg := g
		if tt.off {
			gg.LateAfter = 0
		}
		if got := tt.a.BeforeAt(tt.b, at(tt.now), gg, 0); got != tt.want {
			t.Errorf("%s: BeforeAt = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestAgingWindow: the tiers last only while the queue's backlog is younger
// than LateWindow; past it the queue releases in arrival order, and a queue
// that drained starts a new backlog, and so a new window, at its next push.
func TestAgingWindow(t *testing.T) {
	newQ := func() *Core[string] {
		return NewCore[string](Options{Order: v1.QueueFCFS, MaxWait: ms(60), LateAfter: ms(10), LateWindow: ms(30)})
	}
	tests := []struct {
		name string
		push []int // push times (ms) of a, b, c
		now  int
		want string
	}{
		{"inside the window: the late yield", []int{0, 1, 25}, 29, "c,a,b"},
		{"the backlog outlived the window: arrival order", []int{0, 1, 25}, 30, "a,b,c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newQ()
			for i, n := range []string{"a", "b", "c"} {
				if _, err := c.Push(item(n, 0), at(tt.push[i])); err != nil {
					t.Fatal(err)
				}
			}
			if got := names(releaseAll(t, c, at(tt.now))); got != tt.want {
				t.Errorf("released %q at %d ms, want %q", got, tt.now, tt.want)
			}
		})
	}
	t.Run("a drained queue starts a new window", func(t *testing.T) {
		c := newQ()
		pushAll(t, c, item("first", 0))
		if got := names(releaseAll(t, c, at(5))); got != "first" {
			t.Fatalf("released %q", got)
		}
		for i, n := range []string{"a", "b", "c"} {
			if _, err := c.Push(item(n, 0), at(100+[]int{0, 1, 25}[i])); err != nil {
				t.Fatal(err)
			}
		}
		if g := c.Aging(); !g.Since.Equal(at(100)) {
			t.Fatalf("backlog since %v, want the push at 100 ms", g.Since)
		}
		if got := names(releaseAll(t, c, at(129))); got != "c,a,b" {
			t.Errorf("released %q at 129 ms, want the tiers of a new backlog (c,a,b)", got)
		}
	})
	g := Aging{LateAfter: ms(10), MaxWait: ms(60), Window: ms(30), Since: at(0)}
	if got := g.NextChange(at(20), at(15)); !got.Equal(at(25)) {
		t.Errorf("next change %v, want 25 ms (late)", got)
	}
	if got := g.NextChange(at(26), at(15)); !got.Equal(at(30)) {
		t.Errorf("next change %v, want 30 ms (the window ends before it turns urgent)", got)
	}
	if got := g.NextChange(at(30), at(15)); !got.IsZero() {
		t.Errorf("next change %v after the window, want none", got)
	}
}

// releaseAll releases the whole queue at now, one item per pass.
func releaseAll(t *testing.T, c *Core[string], now time.Time) []*Item[string] {
	t.Helper()
	var got []*Item[string]
	for c.Len() > 0 {
		out := c.Release(now, oneSlot())
		if len(out) == 0 {
			t.Fatalf("nothing released with %d queued", c.Len())
		}
		got = append(got, out...)
	}
	return got
}
