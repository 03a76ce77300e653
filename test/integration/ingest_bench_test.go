package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

// Ingestion shape: vLLM publishes a BlockStored per step and request, 16
// blocks of 16 tokens here, chained on the request's previous store.
const (
	ingestBlocks    = 16
	ingestBlockSize = 16
	ingestChainLen  = 8       // stores per sequence before a new one starts
	ingestCapacity  = 1 << 16 // KV blocks of the engine (vLLM reports ~20k-100k on one GPU)
)

// ingestBatches encodes n batches of one 16-block BlockStored each (token
// ids included), chained ingestChainLen deep; cycle makes the hashes and
// tokens of every pass over the batches new, so the index keeps storing.
func ingestBatches(tb testing.TB, n int, cycle uint64) [][]byte {
	tb.Helper()
	out := make([][]byte, n)
	for i := range out {
		seq, step := uint64(i/ingestChainLen), uint64(i%ingestChainLen)
		base := cycle<<40 | seq<<16 | step*ingestBlocks
		e := kvevents.BlockStored{BlockHashes: make([]uint64, ingestBlocks), BlockSize: ingestBlockSize,
			TokenIDs: make([]uint32, ingestBlocks*ingestBlockSize), Medium: "GPU"}
		for j := range e.BlockHashes {
			e.BlockHashes[j] = base + uint64(j) + 1
		}
		if step > 0 {
			p := base // the last block of the previous store
			e.Parent = &p
		}
		mix := (base/ingestBlocks + 1) * 0x9e3779b97f4a7c15 // distinct content per store and per pass
		for j := range e.TokenIDs {
			e.TokenIDs[j] = uint32(mix>>32) ^ uint32(j*2654435761)
		}
		p, err := kvevents.Encode(kvevents.Batch{TS: 1, Events: []kvevents.Event{e}}, kvevents.EncodingMixed)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = p
	}
	return out
}

// applyBatch is the events path's work for one message: decode, then apply
// each event to the index as the picker maps it.
func applyBatch(ix *kvindex.Index, ep string, seed uint64, payload []byte, now time.Time) error {
	b, err := kvevents.Decode(payload)
	if err != nil {
		return err
	}
	for _, ev := range b.Events {
		switch e := ev.(type) {
		case kvevents.BlockStored:
			err := ix.ApplyStoredBlocks(ep, kvindex.Stored{Seed: seed, Parent: e.Parent, EngineHashes: e.BlockHashes,
				Tokens: e.TokenIDs, BlockSize: e.BlockSize, ExtraKeys: e.ExtraKeys, Group: e.GroupIdx, Tier: kvindex.TierOf(e.Medium)}, now)
			if err != nil && !errors.Is(err, kvindex.ErrUnknownParent) {
				return err
			}
		case kvevents.BlockRemoved:
			ix.ApplyRemovedBlocks(ep, e.GroupIdx, kvindex.TierOf(e.Medium), e.BlockHashes)
		case kvevents.AllBlocksCleared:
			ix.ApplyCleared(ep)
		}
	}
	return nil
}

// BenchmarkIngestBlockStored decodes BlockStored batches (16 blocks with
// token ids) and applies them to the index on the calling goroutine: run
// with -cpu 1 for the per-core rate. blocks/s is the figure to compare with
// the 1,000,000 blocks/s target (blocks/cpu-s leaves out time spent waiting
// for a CPU on a shared host). The endpoint's view is full, so every store
// evicts, as in a long-running picker.
func BenchmarkIngestBlockStored(b *testing.B) {
	batches := ingestBatches(b, 1<<12, 0)
	// The engine's capacity bounds the endpoint's view (the picker sets it from the scraped KV blocks): fill it
	// once off the clock so the run measures the steady state, stores evicting the oldest blocks.
	ix := kvindex.New(kvindex.Options{})
	seed, now := kvindex.Seed("m", "", ""), time.Unix(1e6, 0)
	ix.SetCapacity("10.0.0.1:8000", ingestCapacity)
	for _, p := range ingestBatches(b, 2*ingestCapacity/ingestBlocks, 1<<20) {
		if err := applyBatch(ix, "10.0.0.1:8000", seed, p, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(batches[0])))
	b.ResetTimer()
	var cpu time.Duration
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%len(batches) == 0 { // new hashes each pass; regenerate off the clock
			b.StopTimer()
			cpu += cpuTime() - c0
			batches = ingestBatches(b, len(batches), uint64(i/len(batches)))
			c0 = cpuTime()
			b.StartTimer()
		}
		if err := applyBatch(ix, "10.0.0.1:8000", seed, batches[i%len(batches)], now); err != nil {
			b.Fatal(err)
		}
	}
	cpu += cpuTime() - c0
	b.ReportMetric(float64(b.N*ingestBlocks)/b.Elapsed().Seconds(), "blocks/s")
	// On a shared machine wall time includes waiting for a CPU; this does not.
	b.ReportMetric(float64(b.N*ingestBlocks)/cpu.Seconds(), "blocks/cpu-s")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEventLagZMQ publishes one BlockStored batch (16 blocks with token
// ids) every 100 µs (10,000 events/s; and at 1,000/s for the unloaded lag)
// through a real ZMQ PUB socket on loopback to a Subscriber that decodes and
// applies it to the index, and reports the lag from publish to applied (p50,
// p99, max). It is a measurement, not an assertion.
func BenchmarkEventLagZMQ(b *testing.B) {
	for _, rate := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("events_per_s=%d", rate), func(b *testing.B) { benchLag(b, time.Second/time.Duration(rate)) })
	}
}

func benchLag(b *testing.B, interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub, err := kvevents.NewPublisher(ctx, kvevents.PublisherOptions{Endpoint: "tcp://127.0.0.1:0", Encoding: kvevents.EncodingMixed})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	lag := &lagRecorder{ix: kvindex.New(kvindex.Options{}), seed: kvindex.Seed("m", "", "")}
	lag.ix.SetCapacity("10.0.0.1:8000", ingestCapacity)
	// Fill the endpoint's view first, off the clock, as BenchmarkIngestBlockStored does: a long-running picker's
	// index is full, and an empty one measures its tables growing (single applies of 15-18 ms while they double)
	// rather than the steady state.
	for _, p := range ingestBatches(b, 2*ingestCapacity/ingestBlocks, 1<<20) {
		if err := applyBatch(lag.ix, "10.0.0.1:8000", lag.seed, p, time.Unix(1e6, 0)); err != nil {
			b.Fatal(err)
		}
	}
	sub := kvevents.NewSubscriber(kvevents.SubscriberOptions{Endpoint: pub.Endpoint(), EndpointKey: "10.0.0.1:8000"}, lag, logr.Discard())
	go sub.Run(ctx) //nolint:errcheck // ends with ctx
	batches := decodeAll(b, ingestBatches(b, 1<<12, 0))
	warmUp(b, pub, lag, batches[0])
	b.ResetTimer()
	c0 := cpuTime()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		bt := batches[i%len(batches)]
		bt.TS = float64(time.Now().UnixNano()) / 1e9
		if _, err := pub.Publish(bt); err != nil {
			b.Fatal(err)
		}
	}
	lag.wait(b, b.N)
	b.StopTimer()
	// CPU the whole process (publisher, ZMQ both ends, decode, index) spent
	// per batch: on a shared host the lag mostly measures waiting for a CPU.
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/batch")
	lag.report(b)
}

func decodeAll(tb testing.TB, payloads [][]byte) []kvevents.Batch {
	out := make([]kvevents.Batch, len(payloads))
	for i, p := range payloads {
		b, err := kvevents.Decode(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// warmUp publishes until the subscriber receives (ZMQ drops what a PUB sends
// before the SUB has joined), then forgets the warm-up lags.
func warmUp(b *testing.B, pub *kvevents.Publisher, lag *lagRecorder, bt kvevents.Batch) {
	deadline := time.Now().Add(10 * time.Second)
	for lag.count() == 0 {
		if time.Now().After(deadline) {
			b.Fatal("subscriber received nothing in 10s")
		}
		bt.TS = float64(time.Now().UnixNano()) / 1e9
		if _, err := pub.Publish(bt); err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	lag.reset()
}

// lagRecorder is the Subscriber's handler: apply, then record the lag.
type lagRecorder struct {
	ix   *kvindex.Index
	seed uint64
	mu   sync.Mutex
	lags []time.Duration
}

func (l *lagRecorder) HandleBatch(ep string, b kvevents.Batch) {
	now := time.Now()
	for _, ev := range b.Events {
		if e, ok := ev.(kvevents.BlockStored); ok {
			_ = l.ix.ApplyStoredBlocks(ep, kvindex.Stored{Seed: l.seed, Parent: e.Parent, EngineHashes: e.BlockHashes,
				Tokens: e.TokenIDs, BlockSize: e.BlockSize}, now)
		}
	}
	d := time.Since(time.Unix(0, int64(b.TS*1e9)))
	l.mu.Lock()
	l.lags = append(l.lags, d)
	l.mu.Unlock()
}

func (l *lagRecorder) count() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.lags) }
func (l *lagRecorder) reset()     { l.mu.Lock(); l.lags = l.lags[:0]; l.mu.Unlock() }

func (l *lagRecorder) wait(b *testing.B, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for l.count() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := l.count(); got < n {
		b.Logf("received %d of %d batches (ZMQ dropped the rest past its high-water mark)", got, n)
	}
}

func (l *lagRecorder) report(b *testing.B) {
	l.mu.Lock()
	lags := slices.Clone(l.lags)
	l.mu.Unlock()
	if len(lags) == 0 {
		b.Fatal("no batch received")
	}
	slices.Sort(lags)
	q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-lag-ms")
	b.ReportMetric(q(0.99), "p99-lag-ms")
	b.ReportMetric(float64(lags[len(lags)-1])/1e6, "max-lag-ms")
	b.ReportMetric(float64(len(lags)), "received")
}
