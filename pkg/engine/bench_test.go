package engine

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkStepDecode measures one step with 256 running decodes, the
// steady state of a busy replica (virtual time: no sleeping).
func BenchmarkStepDecode(b *testing.B) {
	c := DefaultConfig()
	c.NumGPUBlocks = 1 << 16
	e, _ := New(c, nil)
	for i := range 256 {
		e.Add(&Request{ID: fmt.Sprint(i), Tokens: seqTokens(i*1000, 200), MaxTokens: 100_000}) //nolint:errcheck
	}
	now := t0
	for !allDecoding(e) {
		now = now.Add(e.Step(now).Duration)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = now.Add(e.Step(now).Duration)
	}
}

func allDecoding(e *Engine) bool {
	return len(e.waiting) == 0 && e.running[len(e.running)-1].outputs > 0
}

// BenchmarkMooncakeLike pushes requests of ~15k prompt tokens (a shared 6k
// prefix among 8 groups) and 150 output tokens through the default engine in
// virtual time; ns/op is per request.
func BenchmarkMooncakeLike(b *testing.B) {
	e, _ := New(DefaultConfig(), nil)
	now := t0
	b.ReportAllocs()
	for i := range b.N {
		tokens := append(seqTokens((i%8)*1_000_000, 6000), seqTokens(10_000_000+i*10_000, 9000)...)
		if err := e.Add(&Request{ID: fmt.Sprint(i), Tokens: tokens, MaxTokens: 150}); err != nil {
			b.Fatal(err)
		}
		for range 20 {
			now = now.Add(e.Step(now).Duration)
		}
	}
	for !e.Idle() {
		now = now.Add(e.Step(now).Duration)
	}
	b.ReportMetric(float64(now.Sub(t0))/float64(time.Second)/float64(b.N), "virtual-s/req")
	b.ReportMetric(float64(e.Stats().PrefixHits)/float64(e.Stats().PrefixQueries), "hit-rate")
}
