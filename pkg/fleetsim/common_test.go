package fleetsim

import (
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/workload"
)

// TestCommonPromptSpreadsConversations: chat conversations without session
// ids, all starting with one 2,000-token system prompt, 30 new ones a
// second on 8 endpoints. A new conversation may compute the prompt on
// another endpoint without paying prefillWeight once two endpoints hold it
// (commonHolders 2), so the endpoints share the first 10 s evenly;
// charged in full (commonHolders 0), the first endpoints to compute the
// prompt keep more of the new conversations, and TTFT suffers.
func TestCommonPromptSpreadsConversations(t *testing.T) {
	reqs, err := workload.MultiTurn{Sessions: 300, Turns: 3, SystemLen: 2000, UserLen: 300, Output: 150,
		ThinkTime: 5 * time.Second, Arrivals: workload.Arrivals{Rate: 30}}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		reqs[i].Session = "" // no session ids: turns follow their history by prefix alone
	}
	w := workload.Merge("conversations", reqs)
	cfg := Config{Engines: Fleet(8, engine.DefaultConfig()), Seed: 1}
	spread := map[int]float64{} // busiest endpoint's requests in the first 10 s over the mean
	p95 := map[int]float64{}
	for _, holders := range []int{2, 0} {
		specs, err := Standard([]string{PolicyKV}, Options{CommonHolders: &holders})
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunAll(cfg, &w, specs, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if len(r.Violations) > 0 || r.Summary.Completed != len(reqs) {
			t.Fatalf("commonHolders %d: completed %d of %d, violations %v", holders, r.Summary.Completed, len(reqs), r.Violations)
		}
		served := make([]int, 8)
		total, most := 0, 0
		for _, rec := range r.Records {
			if rec.Arrival < 10*time.Second && rec.Endpoint >= 0 {
				served[rec.Endpoint]++
				total++
				most = max(most, served[rec.Endpoint])
			}
		}
		spread[holders], p95[holders] = float64(most)/(float64(total)/8), float64(r.Summary.TTFTP95)
		t.Logf("commonHolders %d: requests per endpoint in the first 10 s %v; p95 %.3fs p99 %.3fs", holders, served,
			r.Summary.TTFTP95, r.Summary.TTFTP99)
	}
	if spread[2] > 1.3 || spread[0] < 1.4 || p95[2] >= p95[0] {
		t.Errorf("busiest endpoint over the mean in the first 10 s: %.2f with commonHolders 2 (want at most 1.3), %.2f with 0 "+
			"(want at least 1.4); p95 %.3fs and %.3fs (want lower with 2)", spread[2], spread[0], p95[2], p95[0])
	}
}
