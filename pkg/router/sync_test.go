package router

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/replicasync"
)

// recorder is a replicasync.Recorder that writes down what it hears.
type recorder struct {
	mu    sync.Mutex
	calls []string
	ticks int
}

func (r *recorder) note(format string, args ...any) {
	r.mu.Lock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) Added(id uint64, ep string, w activework.Work, chain []uint64) {
	r.note("added %d %s prompt=%d chain=%t", id, ep, w.PromptTokens, len(chain) > 0)
}
func (r *recorder) PrefillDone(id uint64) { r.note("prefill %d", id) }
func (r *recorder) Refused(id uint64)     { r.note("refused %d", id) }
func (r *recorder) Freed(id uint64)       { r.note("freed %d", id) }
func (r *recorder) Tick(time.Time)        { r.mu.Lock(); r.ticks++; r.mu.Unlock() }

func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.calls, "; ")
	r.calls = nil
	return s
}

// withSync rebuilds f's router with s as its replica-sync recorder.
func withSync(t testing.TB, f *fixture, s replicasync.Recorder, mut func(*v1.Config)) {
	t.Helper()
	cfg := &v1.Config{}
	cfg.Router.Seed = 1
	cfg.KV.Observation = v1.ObservePredicted // as newFixture, whose feed is built for it
	if mut != nil {
		mut(cfg)
	}
	cfg.SetDefaults()
	r, err := New(cfg, Deps{Set: f.set, Index: f.index, Active: f.active, Log: logr.Discard(), Now: f.clock, Events: f.feed, Sync: s})
	if err != nil {
		t.Fatal(err)
	}
	f.r.Close()
	f.r = r
	t.Cleanup(r.Close)
}

// TestSyncHearsTheCommittedLifecycle: peers hear a decision once it is
// committed, in order, under one id; an uncommitted one is never told.
func TestSyncHearsTheCommittedLifecycle(t *testing.T) {
	events := func(c *v1.Config) { c.KV.Observation = v1.ObserveEvents }
	on := true
	bridge := func(c *v1.Config) { c.KV.Observation, c.KV.EventsBridge = v1.ObserveEvents, &on }
	cases := []struct {
		name string
		mut  func(*v1.Config)
		run  func(d *Decision) // what the stream does with the decision
		want string            // %p: primary, %f: first fallback, %n: prompt tokens
	}{
		{"never committed", nil, func(d *Decision) { d.Done(nil) }, ""},
		{"full lifecycle", nil, func(d *Decision) { d.Commit(); d.FirstToken(); d.Progress(40); d.Done(nil); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; prefill 1; freed 1"},
		{"lifecycle calls before commit are not heard", nil, func(d *Decision) { d.FirstToken(); d.Commit(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; freed 1"},
		{"fallback served", nil, func(d *Decision) { d.Commit(); d.Served(d.Endpoints()[1]); d.FirstToken(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; refused 1; freed 1; added 1 %f prompt=%n chain=false; prefill 1; freed 1"},
		{"refused before output", nil, func(d *Decision) { d.Commit(); d.Refused(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; refused 1; freed 1"},
		{"refused after the first token is not heard", nil, func(d *Decision) { d.Commit(); d.FirstToken(); d.Refused(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; prefill 1; freed 1"},
		{"events path sends its bridge claim", bridge, func(d *Decision) { d.Commit(); d.FirstToken(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; prefill 1; freed 1"},
		{"events path: a refusal takes the bridge back", bridge, func(d *Decision) { d.Commit(); d.Refused(); d.Done(nil) },
			"added 1 %p prompt=%n chain=true; refused 1; freed 1"},
		{"events path without the bridge (the default) sends no prefix", events, func(d *Decision) { d.Commit(); d.Done(nil) },
			"added 1 %p prompt=%n chain=false; freed 1"},
		{"events path without the bridge: a refusal has nothing to take back", events, func(d *Decision) { d.Commit(); d.Refused(); d.Done(nil) },
			"added 1 %p prompt=%n chain=false; freed 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 3, nil)
			rec := &recorder{}
			withSync(t, f, rec, tc.mut)
			d, err := f.r.Route(context.Background(), input(words("w", 1000), nil))
			if err != nil {
				t.Fatal(err)
			}
			tc.run(d.(*Decision))
			want := strings.NewReplacer("%p", d.Endpoints()[0], "%f", d.Endpoints()[1],
				"%n", fmt.Sprint(d.(*Decision).Prepared().Req.PromptTokens)).Replace(tc.want)
			if got := rec.take(); got != want {
				t.Fatalf("recorder heard\n  %q\nwant\n  %q", got, want)
			}
		})
	}
}

func TestSyncIDsAreDistinctAndTickRunsTheReplica(t *testing.T) {
	f := newFixture(t, 2, nil)
	rec := &recorder{}
	withSync(t, f, rec, nil)
	for range 3 {
		d, err := f.route(context.Background(), input("hello", nil))
		if err != nil {
			t.Fatal(err)
		}
		d.Done(nil)
	}
	var ids []string
	for _, c := range strings.Split(rec.take(), "; ") {
		if strings.HasPrefix(c, "added") {
			ids = append(ids, strings.Fields(c)[1])
		}
	}
	if !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Fatalf("ids %v, want 1 2 3", ids)
	}
	f.r.Tick(f.clock())
	if rec.ticks != 1 {
		t.Fatalf("router Tick ran the replica's %d times, want 1", rec.ticks)
	}
}

// TestTwoSyncedRoutersSeeEachOthersLoad: two routers, each with its own
// active work and index, joined by replicasync through a direct transport:
// what one routes, the other counts, until it ends.
func TestTwoSyncedRoutersSeeEachOthersLoad(t *testing.T) {
	a, b := newFixture(t, 2, nil), newFixture(t, 2, nil)
	b.set = a.set // one fleet
	ra, rb := newReplica(t, "a", a), newReplica(t, "b", b)
	withSync(t, a, ra, nil)
	withSync(t, b, rb, nil)
	d, err := a.route(context.Background(), input(words("shared", 500), nil))
	if err != nil {
		t.Fatal(err)
	}
	ra.Flush(transportTo(rb))
	ep := d.Endpoints()[0]
	if c := b.active.Counts(ep); c.Requests != 1 || c.PrefillTokens == 0 {
		t.Fatalf("b counts %+v on %s, want a's request with its prefill", c, ep)
	}
	db, err := b.route(context.Background(), input(words("shared", 500)+"more", nil))
	if err != nil {
		t.Fatal(err)
	}
	if db.Endpoints()[0] != ep || db.(*Decision).CachedTokens() == 0 {
		t.Fatalf("b sent a request sharing a's prefix to %s with %d cached tokens, want %s (a's predicted prefix)",
			db.Endpoints()[0], db.(*Decision).CachedTokens(), ep)
	}
	d.Done(nil)
	ra.Flush(transportTo(rb))
	if c := b.active.Counts(ep); c.Requests != 1 {
		t.Fatalf("b counts %d requests on %s after a's ended, want its own 1", c.Requests, ep)
	}
}

// direct delivers a replica's events to another at once.
type direct struct{ to *replicasync.Replica }

func (t direct) Broadcast(evs []replicasync.Event) { t.to.Apply("peer", evs) }

func transportTo(r *replicasync.Replica) direct { return direct{r} }

func newReplica(t testing.TB, id string, f *fixture) *replicasync.Replica {
	t.Helper()
	r, err := replicasync.New(replicasync.Options{ID: id, Active: f.active, Index: f.index, Now: f.clock, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// BenchmarkRouteSynced is BenchmarkRoute with replica sync on: each decision
// also numbers and queues three events (added, prefill done, freed), which a
// Run goroutine hands to a transport that discards them.
func BenchmarkRouteSynced(b *testing.B) {
	f := newFixture(b, 10, nil)
	rep := newReplica(b, "a", f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rep.Run(ctx, discard{}); close(done) }()
	defer func() { cancel(); <-done }()
	withSync(b, f, rep, nil)
	benchRoute(b, f)
}

type discard struct{}

func (discard) Broadcast([]replicasync.Event) {}
