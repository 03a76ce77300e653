package fleetsim

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestSummaryCountsRefusalsAsInf: 10 requests, TTFT 1..9 s served, one
// refused. The refusal is +Inf in the counted percentiles (p99 interpolates
// into it) and absent from the served-only ones.
func TestSummaryCountsRefusalsAsInf(t *testing.T) {
	sm := &sim{cfg: Config{TTFTTarget: 5 * time.Second}, name: "x"}
	for i := 0; i < 10; i++ {
		r := Record{ID: i, Arrival: 0, Endpoint: -1, Prompt: 10, Finish: -1, First: -1}
		if i < 9 {
			r.First, r.Finish, r.Endpoint = time.Duration(i+1)*time.Second, time.Duration(i+2)*time.Second, 0
		} else {
			r.Rejected, r.Status, r.Finish = "overloaded", 503, 0
		}
		sm.recs = append(sm.recs, r)
	}
	sm.nodes = []*node{{}}
	// An invalid request (400) is rejected by every policy alike: left out.
	sm.recs = append(sm.recs, Record{ID: 10, Endpoint: -1, First: -1, Rejected: "engine_rejected", Status: 400})
	s := summarize(sm)
	if !math.IsInf(float64(s.TTFTP99), 1) || float64(s.TTFTP50) != 5.5 {
		t.Fatalf("counted p50 %v p99 %v, want 5.5 and +Inf", s.TTFTP50, s.TTFTP99)
	}
	if s.ServedTTFTP99 != 8.92 && math.Abs(s.ServedTTFTP99-8.92) > 1e-9 {
		t.Fatalf("served p99 %v, want 8.92", s.ServedTTFTP99)
	}
	if s.Rejected != 2 || s.RejectedBy["overloaded"] != 1 || s.RejectedBy["engine_rejected"] != 1 {
		t.Fatalf("rejected %d %v", s.Rejected, s.RejectedBy)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(float64(back.TTFTP99), 1) {
		t.Fatalf("JSON round trip: %v, p99 %v (%s)", err, back.TTFTP99, b)
	}
}

func TestQuantileTowardInfIsInf(t *testing.T) {
	if q := quantile([]float64{1, math.Inf(1)}, 0.5); !math.IsInf(q, 1) {
		t.Fatalf("got %v, want +Inf", q)
	}
	if q := quantile([]float64{1, 3, math.Inf(1)}, 0.25); q != 2 {
		t.Fatalf("got %v, want 2", q)
	}
}
