package fleetsim

import (
	"reflect"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/workload"
)

// prefixFleet has small KV caches: round-robin makes every endpoint hold
// every prefix and thrash, while cache-aware routing keeps each prefix on one.
func prefixFleet() (Config, *workload.Workload, error) {
	ec := engine.DefaultConfig()
	ec.NumGPUBlocks = 1200
	ec.PrefillTokensPerSec = 40000
	reqs, err := workload.SharedPrefix{Requests: 400, Prefixes: 8, PrefixLen: 4000, SuffixLen: 100, Share: 0.95,
		Output: 16, Arrivals: workload.Arrivals{Rate: 25}}.Generate(5)
	w := workload.Merge("prefixes", reqs)
	return Config{Engines: Fleet(4, ec)}, &w, err
}

func TestKVBeatsRoundRobinOnRepeatedPrefixes(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := Standard([]string{PolicyRoundRobin, PolicyKV, PolicyKVObserved}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunAll(cfg, w, specs, 2)
	if err != nil {
		t.Fatal(err)
	}
	rr, kv, obs := res[0].Summary, res[1].Summary, res[2].Summary
	for _, r := range res {
		if len(r.Violations) > 0 || r.Summary.Completed != 400 {
			t.Fatalf("%s: completed %d, violations %v", r.Policy, r.Summary.Completed, r.Violations)
		}
	}
	t.Logf("rr hit %.2f p95 %.3fs; kv hit %.2f p95 %.3fs; observed hit %.2f p95 %.3fs",
		rr.PrefixHit, rr.TTFTP95, kv.PrefixHit, kv.TTFTP95, obs.PrefixHit, obs.TTFTP95)
	for _, s := range []Summary{kv, obs} {
		if s.PrefixHit < rr.PrefixHit+0.2 || s.TTFTP95 >= rr.TTFTP95 || s.TTFTP50 >= rr.TTFTP50 {
			t.Errorf("%s (hit %.2f, p50 %.3f, p95 %.3f) does not beat round-robin (hit %.2f, p50 %.3f, p95 %.3f)",
				s.Policy, s.PrefixHit, s.TTFTP50, s.TTFTP95, rr.PrefixHit, rr.TTFTP50, rr.TTFTP95)
		}
	}
}

func TestStandardPoliciesRunAndReproduce(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	w.Requests = w.Requests[:150]
	specs, err := Standard(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := RunAll(cfg, w, specs, 2)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RunAll(cfg, w, specs, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		s := r.Summary
		if len(r.Violations) > 0 || s.Completed+s.Rejected != 150 {
			t.Errorf("%s: %d completed + %d rejected of 150, violations %v", r.Policy, s.Completed, s.Rejected, r.Violations)
		}
		if !reflect.DeepEqual(r.Records, again[i].Records) {
			t.Errorf("%s: two runs with the same seed differ", r.Policy)
		}
	}
	if _, err := Standard([]string{"nope"}, Options{}); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestObservedPathNeedsTimelyEvents(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := Standard([]string{PolicyKVObserved}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := Run(cfg, w, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg.EventsDelay = time.Hour // events arrive after the run: kv is load-only
	late, err := Run(cfg, w, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	if late.Summary.PrefixHit > prompt.Summary.PrefixHit-0.2 {
		t.Errorf("hit with events an hour late %.2f, with 50ms %.2f: want a clear drop", late.Summary.PrefixHit, prompt.Summary.PrefixHit)
	}
}
