package router

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// A request whose prefix one endpoint holds waits in the picker for that
// endpoint's room and then goes there; the pool-wide rule let it pass on the
// idle endpoint's room and sent it to the holder at once, to wait in the
// engine behind the long prefill queued there.
func TestCachedRequestWaitsForTheEndpointItPicks(t *testing.T) {
	f := newFixture(t, 2, nil) // kv mode: queue on, affinity threshold 1.0
	ctx := context.Background()
	prefix := words("shared", 2400) // about 6,000 tokens
	first, err := f.route(ctx, input(prefix+"first", nil))
	if err != nil {
		t.Fatal(err)
	}
	holder := first.Endpoints()[0]
	first.FirstToken()
	first.Done(nil)
	// 9,000 tokens of prefill on the holder: more than one engine step's
	// 8,192, yet cheaper to wait for than recomputing the prefix elsewhere.
	long := f.active.Start(holder, activework.Work{PromptTokens: 9000, UncachedTokens: 9000, BlockSize: 16}, f.clock())
	defer long.Free()
	got := make(chan string, 1)
	go func() {
		d, err := f.route(ctx, input(prefix+"second", nil))
		if err != nil {
			got <- "error " + err.Error()
			return
		}
		if !d.(*Decision).p.Req.Queued {
			got <- "not marked queued (the hot-prefix rule would count it as on the fast path)"
			return
		}
		got <- d.Endpoints()[0]
		d.Done(nil)
	}()
	waitLen(t, f.r, 1)
	select {
	case ep := <-got:
		t.Fatalf("dispatched to %s while its endpoint had no room", ep)
	case <-time.After(50 * time.Millisecond):
	}
	long.PrefillDone(f.clock())
	if ep := <-got; ep != holder {
		t.Fatalf("went to %s, want the prefix holder %s", ep, holder)
	}
}

// A request no endpoint holds cached goes to an endpoint with room, not to
// one past the queue threshold, even where its cost prefers that one (here
// the endpoint with room runs a large decode batch).
func TestColdRequestGoesWhereThereIsRoom(t *testing.T) {
	f := newFixture(t, 2, nil)
	eps := f.set.Snapshot().List
	full, free := eps[0].Key(), eps[1].Key()
	h := f.active.Start(full, activework.Work{PromptTokens: 2200, UncachedTokens: 2200, BlockSize: 16}, f.clock())
	defer h.Free()
	for i := 0; i < 20; i++ {
		d := f.active.Start(free, activework.Work{PromptTokens: 8000, UncachedTokens: 8000, BlockSize: 16}, f.clock())
		d.PrefillDone(f.clock())
		defer d.Free()
	}
	for i := 0; i < 3; i++ {
		d, err := f.route(context.Background(), input(words(string(rune('a'+i)), 40), nil))
		if err != nil {
			t.Fatal(err)
		}
		if ep := d.Endpoints()[0]; ep != free {
			t.Fatalf("request %d went to %s, past the threshold; want %s", i, ep, free)
		}
		d.FirstToken()
		d.Done(nil)
	}
}

func TestPinAdmitted(t *testing.T) {
	f := newFixture(t, 4, nil)
	eps := f.set.Snapshot().List
	c := func(i int) scheduler.Candidate { return scheduler.Candidate{Entry: eps[i]} }
	keys := func(cs []scheduler.Candidate) []string {
		var out []string
		for i := range cs {
			out = append(out, cs[i].Key())
		}
		return out
	}
	k := func(is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, eps[i].Key())
		}
		return out
	}
	cases := []struct {
		name string
		adm  int // -1: none
		want []string
	}{
		{"none", -1, k(0, 1, 2)},
		{"already primary", 0, k(0, 1, 2)},
		{"a fallback moves first", 1, k(1, 0, 2)},
		{"not chosen: replaces the last fallback", 3, k(3, 0, 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var adm *scheduler.Candidate
			if tc.adm >= 0 {
				a := c(tc.adm)
				adm = &a
			}
			got := keys(pinAdmitted([]scheduler.Candidate{c(0), c(1), c(2)}, adm))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Only kv mode admits on the scheduler's pick: round-robin with a queue
// threshold still alternates (a pick at admission would advance it twice per
// request, sending every request to the same endpoint).
func TestRoundRobinWithQueueAlternates(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) {
		th := 0.5
		c.Router.Mode, c.Admission.QueueThreshold = v1.ModeRoundRobin, &th
	})
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		d, err := f.route(context.Background(), input("short", nil))
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Endpoints()[0]]++
		d.FirstToken()
		d.Done(nil)
	}
	if len(seen) != 2 || seen[f.set.Snapshot().List[0].Key()] != 2 {
		t.Fatalf("round-robin with a queue spread 4 requests as %v, want 2 and 2", seen)
	}
}
