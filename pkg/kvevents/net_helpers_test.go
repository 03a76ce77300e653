package kvevents

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

const probeTS = -1 // batches published only to get a subscription going

// recorder is a Handler that keeps everything it is given.
type recorder struct {
	mu  sync.Mutex
	got []recorded
}

type recorded struct {
	key string
	b   Batch
}

func (r *recorder) HandleBatch(key string, b Batch) {
	r.mu.Lock()
	r.got = append(r.got, recorded{key, b})
	r.mu.Unlock()
}

// real returns the TS of every non-probe, non-synthetic batch, in order.
func (r *recorder) real() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []float64
	for _, g := range r.got {
		if g.b.TS >= 0 && g.b.TS < 1e6 {
			out = append(out, g.b.TS)
		}
	}
	return out
}

// clears counts the synthetic AllBlocksCleared batches (TS = wall clock).
func (r *recorder) clears() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g.b.TS >= 1e6 && len(g.b.Events) == 1 && g.b.Events[0] == (AllBlocksCleared{}) {
			n++
		}
	}
	return n
}

func testLog(t *testing.T) logr.Logger {
	return funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{Verbosity: 0})
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newTestPublisher(t *testing.T, o PublisherOptions) *Publisher {
	t.Helper()
	if o.Endpoint == "" {
		o.Endpoint = "tcp://127.0.0.1:0"
	}
	var p *Publisher
	var err error
	for i := 0; i < 50; i++ { // a just-closed port may take a moment to free
		if p, err = NewPublisher(context.Background(), o); err == nil {
			t.Cleanup(func() { p.Close() })
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("NewPublisher: %v", err)
	return nil
}

// startSubscriber runs s until the test ends.
func startSubscriber(t *testing.T, s *Subscriber) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// warmUp publishes probes until the subscriber has received one: ZeroMQ drops
// what a PUB sends before the SUB's subscription reaches it (slow joiner).
func warmUp(t *testing.T, p *Publisher, s *Subscriber) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.Stats().HaveSeq {
		if time.Now().After(deadline) {
			t.Fatal("subscriber never received a probe")
		}
		if _, err := p.Publish(Batch{TS: probeTS}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10 && !s.Stats().HaveSeq; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func publishReal(t *testing.T, p *Publisher, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		b := Batch{TS: float64(i), Events: []Event{BlockStored{BlockHashes: []uint64{uint64(i)}, TokenIDs: []uint32{uint32(i)}, BlockSize: 1}}}
		if _, err := p.Publish(b); err != nil {
			t.Fatal(err)
		}
	}
}

func seqRange(from, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(from + i)
	}
	return out
}

// publishUntil publishes a probe every 20ms until done (given the last
// probe's sequence) holds.
func publishUntil(t *testing.T, p *Publisher, what string, done func(seq uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		seq, err := p.Publish(Batch{TS: probeTS})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if done(seq) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *recorder) keys() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, g := range r.got {
		out[g.key] = true
	}
	return out
}

// count is how many batches arrived for key.
func (r *recorder) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g.key == key {
			n++
		}
	}
	return n
}

// countTS is how many batches with timestamp ts arrived for key.
func (r *recorder) countTS(key string, ts float64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g.key == key && g.b.TS == ts {
			n++
		}
	}
	return n
}
