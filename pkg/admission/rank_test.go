package admission

import (
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

func TestRankBefore(t *testing.T) {
	t0 := time.Unix(100, 0)
	t1 := t0.Add(time.Millisecond)
	cases := []struct {
		name string
		a, b Rank
		want bool
	}{
		{"higher priority first", Rank{Priority: 1, Class: 30, Enqueued: t1}, Rank{Priority: 0, Class: 1, Enqueued: t0}, true},
		{"lower priority after", Rank{Priority: -1, Enqueued: t0}, Rank{Priority: 0, Enqueued: t1}, false},
		{"smaller class first", Rank{Class: 10, Enqueued: t1}, Rank{Class: 11, Enqueued: t0}, true},
		{"same class, earlier first", Rank{Class: 10, Enqueued: t0}, Rank{Class: 10, Enqueued: t1}, true},
		{"equal is not before", Rank{Class: 10, Enqueued: t0}, Rank{Class: 10, Enqueued: t0}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Before(c.b); got != c.want {
				t.Fatalf("%+v before %+v = %v, want %v", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestRankBeforeBy(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := time.Millisecond
	cases := []struct {
		name string
		a, b Rank
		want bool
	}{
		{"higher priority first, whenever enqueued", Rank{Priority: 1, Enqueued: t0.Add(time.Second)}, Rank{Enqueued: t0}, true},
		{"smaller class first, whenever enqueued", Rank{Class: 10, Enqueued: t0.Add(time.Second)}, Rank{Class: 11, Enqueued: t0}, true},
		{"larger class after", Rank{Class: 12, Enqueued: t0}, Rank{Class: 11, Enqueued: t0.Add(time.Second)}, false},
		{"same class, earlier by more than the slack", Rank{Class: 10, Enqueued: t0}, Rank{Class: 10, Enqueued: t0.Add(11 * ms)}, true},
		{"same class, earlier by the slack exactly", Rank{Class: 10, Enqueued: t0}, Rank{Class: 10, Enqueued: t0.Add(10 * ms)}, false},
		{"same class, earlier within the slack", Rank{Class: 10, Enqueued: t0}, Rank{Class: 10, Enqueued: t0.Add(3 * ms)}, false},
		{"same class, later", Rank{Class: 10, Enqueued: t0.Add(20 * ms)}, Rank{Class: 10, Enqueued: t0}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.BeforeBy(c.b, 10*ms); got != c.want {
				t.Fatalf("%+v before %+v by 10ms = %v, want %v", c.a, c.b, got, c.want)
			}
		})
	}
}

// An item's rank follows its queue's order: the work class under wspt, none
// under fcfs, where arrival alone decides.
func TestItemRankFollowsOrder(t *testing.T) {
	now := time.Unix(100, 0)
	for _, order := range []string{v1.QueueWSPT, v1.QueueFCFS} {
		c := NewCore[int](Options{MaxLength: 4, MaxWait: time.Second, Order: order})
		small := &Item[int]{ISLTokens: 100}
		big := &Item[int]{ISLTokens: 10000}
		for _, it := range []*Item[int]{big, small} {
			if _, err := c.Push(it, now); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Millisecond)
		}
		ranks := map[*Item[int]]Rank{small: small.Rank(), big: big.Rank()}
		smallFirst := ranks[small].Before(ranks[big])
		if want := order == v1.QueueWSPT; smallFirst != want {
			t.Fatalf("%s: small before big = %v, want %v (ranks %+v, %+v)", order, smallFirst, want, ranks[small], ranks[big])
		}
		// The release order agrees with the ranks.
		got := c.Release(now, func(*Item[int]) bool { return true })
		if len(got) != 2 || !ranks[got[0]].Before(ranks[got[1]]) {
			t.Fatalf("%s: release order disagrees with ranks %+v", order, ranks)
		}
	}
}
