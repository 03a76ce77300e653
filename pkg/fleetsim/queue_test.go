package fleetsim

import (
	"sort"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/workload"
)

// TestKVQueueLetsShortRequestsPassADocumentBurst: 12 long documents land
// at once on two endpoints, then short questions on a cached prefix keep
// arriving. With kv mode's default queue (wspt) the documents wait in the
// picker and the questions pass them; with the queue off (or first come
// first served) the questions wait in the engines behind the documents.
func TestKVQueueLetsShortRequestsPassADocumentBurst(t *testing.T) {
	docs, err := workload.Burst{Documents: 12, DocLen: 12000, Output: 16, Start: time.Second, Window: 100 * time.Millisecond}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := workload.SharedPrefix{Requests: 150, Prefixes: 1, PrefixLen: 2000, SuffixLen: 50, Share: 1, Output: 16,
		Arrivals: workload.Arrivals{Rate: 20}}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	w := workload.Merge("doc-burst", docs, qs)
	off, fcfs := false, v1.QueueFCFS
	p90 := map[string]time.Duration{}
	for _, tc := range []struct {
		name string
		mut  func(*v1.Config)
	}{
		{"default", func(*v1.Config) {}},
		{"queue off", func(c *v1.Config) { c.Admission.Queue = &off }},
		{"fcfs", func(c *v1.Config) { c.Admission.QueuePolicy = fcfs }},
	} {
		spec := KVPick(tc.name, func(c *v1.Config) { c.Router.Mode = v1.ModeKV; tc.mut(c) })
		res, err := Run(Config{Engines: Fleet(2, engine.DefaultConfig())}, &w, spec)
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Summary; s.Rejected != 0 || len(res.Violations) > 0 {
			t.Fatalf("%s: %d rejected %v, violations %v", tc.name, s.Rejected, s.RejectedBy, res.Violations)
		}
		p90[tc.name] = questionP90(res.Records)
	}
	t.Logf("questions' p90 TTFT: %v", p90)
	if p90["default"] >= p90["queue off"] || p90["default"] >= p90["fcfs"] {
		t.Errorf("questions' p90 TTFT with the default queue %v, not below queue off %v and fcfs %v",
			p90["default"], p90["queue off"], p90["fcfs"])
	}
}

// questionP90 is the 90th percentile TTFT of the short (non-import) requests.
func questionP90(recs []Record) time.Duration {
	var ttft []time.Duration
	for i := range recs {
		if recs[i].Class != "import" && recs[i].First >= 0 {
			ttft = append(ttft, recs[i].TTFT())
		}
	}
	sort.Slice(ttft, func(i, j int) bool { return ttft[i] < ttft[j] })
	return ttft[len(ttft)*9/10]
}
