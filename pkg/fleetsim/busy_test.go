package fleetsim

import (
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/workload"
)

// TestBurstTheEnginesCanQueueIsRouted: 16 concurrent 8,000-token requests on
// three small endpoints (room for about two prompts each at once). The
// engines queue the rest, so nothing is refused: busy thresholds are off by
// default, and when set they count only KV-holding work, which a request
// waiting for its prefill does not hold. Counting all in-flight blocks (the
// old rule) refuses part of the burst with AllEligibleWorkersOverloaded.
func TestBurstTheEnginesCanQueueIsRouted(t *testing.T) {
	ec := engine.DefaultConfig()
	ec.NumGPUBlocks = 1100 // 17,600 tokens
	reqs, err := workload.Burst{Documents: 16, DocLen: 8000, Output: 32, Window: 10 * time.Millisecond}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	w := workload.Merge("burst", reqs)
	frac := 1.0
	for _, tc := range []struct {
		name string
		mut  func(*v1.Config)
	}{
		{"defaults", func(*v1.Config) {}},
		{"decode threshold 1.0 set", func(c *v1.Config) { c.Router.Busy.ActiveDecodeBlocks = &frac }},
	} {
		spec := KVPick("kv", func(c *v1.Config) { c.Router.Mode = v1.ModeKV; tc.mut(c) })
		res, err := Run(Config{Engines: Fleet(3, ec)}, &w, spec)
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Summary; s.Rejected != 0 || s.Completed != 16 || len(res.Violations) > 0 {
			t.Errorf("%s: %d rejected %v, %d completed, violations %v", tc.name, s.Rejected, s.RejectedBy, s.Completed, res.Violations)
		}
	}
}
