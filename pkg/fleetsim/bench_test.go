package fleetsim

import (
	"testing"

	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/workload"
)

// BenchmarkReplay measures one replay of 1,000 shared-prefix requests (32
// prefixes of 2k tokens, 2.1k-token prompts) on 4 endpoints per policy;
// ns/op is a whole run.
func BenchmarkReplay(b *testing.B) {
	reqs, err := workload.SharedPrefix{Requests: 1000, Prefixes: 32, PrefixLen: 2000, SuffixLen: 100, Share: 0.9,
		Output: 64, Arrivals: workload.Arrivals{Rate: 40}}.Generate(1)
	if err != nil {
		b.Fatal(err)
	}
	w := workload.Merge("bench", reqs)
	cfg := Config{Engines: Fleet(4, engine.DefaultConfig())}
	for _, name := range []string{PolicyRoundRobin, PolicyKV, PolicyKVObserved, PolicySGLang} {
		specs, err := Standard([]string{name}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(cfg, &w, specs[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
