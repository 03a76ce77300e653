package router

import (
	"context"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// TestSessionPinCounts: pins are counted per endpoint through re-pins and
// expiry, and a new session's candidates get their pins' expected running
// requests (pins x the pool's running requests per pin).
func TestSessionPinCounts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := newSessions(time.Minute)
	s.set("a", "ep1", t0)
	s.set("b", "ep1", t0)
	s.set("c", "ep2", t0)
	s.set("b", "ep2", t0.Add(30*time.Second)) // re-pinned: moves, slides
	if got := [2]int{s.count("ep1"), s.count("ep2")}; got != [2]int{1, 2} {
		t.Fatalf("pins ep1, ep2 = %v, want [1 2]", got)
	}
	if left := s.expire(t0.Add(61 * time.Second)); left != 1 || s.count("ep1") != 0 || s.count("ep2") != 1 {
		t.Fatalf("after expiry: %d left, ep1 %d, ep2 %d; want 1, 0, 1", left, s.count("ep1"), s.count("ep2"))
	}

	r := &Router{sessions: newSessions(time.Minute)}
	for _, id := range []string{"x", "y", "z"} {
		r.sessions.set(id, "ep1", t0)
	}
	r.sessions.set("w", "ep2", t0)
	cands := []scheduler.Candidate{{Active: activework.Counts{Requests: 2}}, {Active: activework.Counts{Requests: 6}}}
	keys := []string{"ep1", "ep2"}
	r.sessionLoadBy(cands, func(i int) string { return keys[i] })
	// 8 running over 4 pins: 2 per pin.
	if cands[0].SessionRunning != 6 || cands[1].SessionRunning != 2 {
		t.Fatalf("expected running %v, %v; want 6, 2", cands[0].SessionRunning, cands[1].SessionRunning)
	}
}

// TestPrefillWorkCreditsTheBestOverlap: the wspt key is the prompt less the
// longest prefix any endpoint holds (predicted here by an earlier decision).
func TestPrefillWorkCreditsTheBestOverlap(t *testing.T) {
	f := newFixture(t, 3, nil)
	ctx := context.Background()
	shared := words("sys", 1000)
	cold, err := f.r.Prepare(ctx, input(shared+words("a", 50), nil))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.r.PrefillWork(cold); w != cold.Req.PromptTokens {
		t.Fatalf("work %d before any decision, want the whole prompt %d", w, cold.Req.PromptTokens)
	}
	if _, err := f.route(ctx, input(shared+words("b", 50), nil)); err != nil {
		t.Fatal(err)
	}
	warm, err := f.r.Prepare(ctx, input(shared+words("c", 50), nil))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.r.PrefillWork(warm); w <= 0 || w > warm.Req.PromptTokens-900 {
		t.Fatalf("work %d of a %d-token prompt whose ~1,000-token prefix is held, want at most %d",
			w, warm.Req.PromptTokens, warm.Req.PromptTokens-900)
	}
}

// TestSessionLoadFollowsTheKnob: a new session's candidates carry their
// pinned sessions' expected running requests only with
// router.kvCost.sessionLoad on; the default (off) leaves them out.
func TestSessionLoadFollowsTheKnob(t *testing.T) {
	for _, tc := range []struct {
		name string
		on   *bool
		want bool
	}{{"default", nil, false}, {"off", testutil.Ptr(false), false}, {"on", testutil.Ptr(true), true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 2, func(c *v1.Config) { c.Router.KVCost.SessionLoad = tc.on })
			ctx := context.Background()
			// Two live sessions, one still running: each endpoint gets pins.
			for i, id := range []string{"s1", "s2", "s3"} {
				d, err := f.route(ctx, input(words(id, 50+i), map[string]string{"x-session-id": id}))
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 {
					d.Done(nil)
				}
			}
			p, err := f.r.Prepare(ctx, input(words("new", 40), map[string]string{"x-session-id": "s4"}))
			if err != nil {
				t.Fatal(err)
			}
			p.Req.NewSession = true // as choose marks a session with no live pin
			pins, running := 0, 0.0
			for _, c := range f.r.candidates(p, nil) {
				pins += c.Sessions
				running += c.SessionRunning
			}
			if got := pins == 3 && running > 0; got != tc.want {
				t.Fatalf("sessionLoad %s: candidates carry %d pins, %v expected running; want them counted: %v",
					tc.name, pins, running, tc.want)
			}
		})
	}
}
