package replicasync

import (
	"context"
	"testing"
)

// BenchmarkRecorder is what replica sync adds to one decision's path: the
// Added, PrefillDone and Freed calls (numbering, the own in-flight table, a
// non-blocking queue send each), with a Run goroutine draining the queue.
func BenchmarkRecorder(b *testing.B) {
	f := newFixture(b, "a", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.r.Run(ctx, transportFunc(func([]Event) {})); close(done) }()
	defer func() { cancel(); <-done }()
	w, chain := work(8000, make([]uint64, 500)...), make([]uint64, 125)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range uint64(b.N) {
		f.r.Added(i+1, "10.0.0.1:8000", w, chain)
		f.r.PrefillDone(i + 1)
		f.r.Freed(i + 1)
	}
}

// BenchmarkApply is a peer applying one request's three events.
func BenchmarkApply(b *testing.B) {
	f := newFixture(b, "b", nil)
	w, chain := work(8000, make([]uint64, 500)...), make([]uint64, 125)
	for i := range chain {
		chain[i] = uint64(i + 1)
	}
	evs := make([]Event, 3)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range uint64(b.N) {
		evs[0] = Event{Origin: "a", Epoch: 1, Seq: 3*i + 1, Kind: KindAdded, Request: i, Endpoint: "10.0.0.1:8000", Work: w, IndexChain: chain}
		evs[1] = Event{Origin: "a", Epoch: 1, Seq: 3*i + 2, Kind: KindPrefillDone, Request: i}
		evs[2] = Event{Origin: "a", Epoch: 1, Seq: 3*i + 3, Kind: KindFreed, Request: i}
		f.r.Apply("a", evs)
	}
}
