package router

import (
	"testing"
	"time"

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
