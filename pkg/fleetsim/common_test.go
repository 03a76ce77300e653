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
// charged in full (commonHolders 0, hot-prefix rule off), the first
// endpoints to compute the prompt keep more of the new conversations, and
// TTFT suffers. The hot-prefix rule alone (commonHolders 0, its default)
// spreads them too: the prompt is shared by many requests in flight; and
// so does the popular-prefix rule alone (the prompt draws every request).
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
	cases := []struct {
		name         string
		holders, hot int
		popular      float64
		even         bool // busiest endpoint at most 1.3x the mean in the first 10 s, else at least 1.4x
	}{
		{"commonHolders 2", 2, 0, 0, true},
		{"no rule", 0, 0, 0, false},
		{"hot prefix alone", 0, 3, 0, true},
		{"popular prefix alone", 0, 0, 0.15, true},
	}
	p95 := make([]float64, len(cases))
	for i, c := range cases {
		specs, err := Standard([]string{PolicyKV}, Options{CommonHolders: &c.holders, HotPrefixRequests: &c.hot,
			PopularShare: &c.popular})
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunAll(cfg, &w, specs, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if len(r.Violations) > 0 || r.Summary.Completed != len(reqs) {
			t.Fatalf("%s: completed %d of %d, violations %v", c.name, r.Summary.Completed, len(reqs), r.Violations)
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
		spread := float64(most) / (float64(total) / 8)
		p95[i] = float64(r.Summary.TTFTP95)
		t.Logf("%s: requests per endpoint in the first 10 s %v; p95 %.3fs p99 %.3fs", c.name, served,
			r.Summary.TTFTP95, r.Summary.TTFTP99)
		if c.even && spread > 1.3 || !c.even && spread < 1.4 {
			t.Errorf("%s: busiest endpoint %.2fx the mean in the first 10 s; want even: %v", c.name, spread, c.even)
		}
	}
	for i := range p95 {
		if i != 1 && p95[1] <= p95[i] {
			t.Errorf("p95 %v: want the crowded run (no rule) the highest", p95)
			break
		}
	}
}
