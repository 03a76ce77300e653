package fleetsim

import (
	"fmt"
	"time"

	"github.com/kvpick/kvpick/pkg/workload"
)

// Record is one request's outcome. Times are virtual offsets from the start;
// -1 when the request never got there.
type Record struct {
	ID       int
	Class    string
	Arrival  time.Duration
	Dispatch time.Duration
	First    time.Duration
	Finish   time.Duration // end of service, or the rejection time
	// Prompt tokens, of which Cached were served from the engine's prefix
	// cache (the engine's own usage report); Output requested, Generated done.
	Prompt, Cached, Output, Generated int
	Endpoint                          int // fleet index, -1 when never dispatched
	Rejected                          string
	Status                            int // HTTP status of a rejection
	Queued                            bool
	Preemptions                       int
	// Prefix is the ID of the prompt's first segment: which shared prefix
	// (or system prompt) the request starts with, for analyses that group
	// requests by it; 0 for an empty prompt.
	Prefix uint64
}

func newRecord(r *workload.Request) Record {
	rec := Record{ID: r.ID, Class: r.Class, Arrival: r.Arrival, Dispatch: -1, First: -1, Finish: -1,
		Prompt: r.InputLen(), Output: r.Output, Endpoint: -1}
	if len(r.Segments) > 0 {
		rec.Prefix = r.Segments[0].ID
	}
	return rec
}

// Completed reports whether the request was served to its last token.
func (r *Record) Completed() bool { return r.Rejected == "" && r.Finish >= 0 }

// Refused reports a rejection for capacity (429 or 503, or any non-4xx):
// the request was valid and the fleet did not serve it.
func (r *Record) Refused() bool {
	return r.Rejected != "" && (r.Status == 429 || r.Status < 400 || r.Status >= 500)
}

// TTFT is arrival to first token (queueing included).
func (r *Record) TTFT() time.Duration { return r.First - r.Arrival }

// E2E is arrival to last token.
func (r *Record) E2E() time.Duration { return r.Finish - r.Arrival }

// Sample is the fleet's state at one instant, for time-series plots.
type Sample struct {
	At time.Duration
	// QueuedRequests and QueuedTokens are in the picker's admission queue.
	QueuedRequests, QueuedTokens int
	// EngineWaiting is requests waiting inside engines (all endpoints).
	EngineWaiting int
	// PrefillDue is prompt tokens dispatched to engines without a first token yet.
	PrefillDue int
	// Running is requests running in engines.
	Running int
}

func (s *sim) sample() {
	sm := Sample{At: s.now}
	for _, q := range s.queues {
		sm.QueuedRequests, sm.QueuedTokens = sm.QueuedRequests+q.Len(), sm.QueuedTokens+q.PendingTokens()
	}
	for _, n := range s.nodes {
		st := n.eng.Stats()
		sm.EngineWaiting += st.Waiting
		sm.Running += st.Running
		sm.PrefillDue += n.prefillDue
	}
	s.series = append(s.series, sm)
}

// invariants collects violations of the simulator's invariants (at most 20
// kept); a correct run has none.
type invariants struct {
	n      int
	errors []string
}

func (v *invariants) fail(format string, args ...any) {
	v.n++
	if len(v.errors) < 20 {
		v.errors = append(v.errors, fmt.Sprintf(format, args...))
	}
}
