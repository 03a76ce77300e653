package kvindex

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse runs Match, RecordPredicted, the observed path, Expire,
// SetCapacity, Stats and RemoveEndpoint together; run it under -race. It
// checks invariants that hold at any interleaving.
func TestConcurrentUse(t *testing.T) {
	ix := New(Options{MaxBlocksPerEndpoint: 300, PredictedTTL: time.Second})
	seed := Seed("m", "", "")
	chains := make([][]uint64, 8)
	for i := range chains {
		chains[i] = BlockHashes(nil, seed, seq(64*16, uint32(i%3)), 16) // shared prefixes across i%3
	}
	var wg sync.WaitGroup
	run := func(n int, f func(g, i int)) {
		for g := 0; g < n; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					f(g, i)
				}
			}()
		}
	}
	errs := make(chan error, 100)
	run(3, func(g, i int) { // readers
		c := chains[(g+i)%len(chains)]
		for _, o := range ix.Match(c, t0.Add(time.Duration(i)*time.Millisecond), nil) {
			if o.Blocks < 1 || o.Blocks > len(c) || o.Endpoint == "" {
				select {
				case errs <- fmt.Errorf("bad overlap %+v", o):
				default:
				}
			}
		}
	})
	run(2, func(g, i int) { // predicted writers
		ix.RecordPredicted(fmt.Sprintf("p%d", i%5), chains[(g+i)%len(chains)], t0.Add(time.Duration(i)*10*time.Millisecond))
	})
	run(1, func(g, i int) { // observed writer
		ep := fmt.Sprintf("o%d", i%3)
		tokens := seq(64, uint32(i%4))
		_ = ix.ApplyStored(ep, seed, nil, []uint64{uint64(i), uint64(i) + 1000, uint64(i) + 2000, uint64(i) + 3000}, tokens, 16, t0)
		_ = ix.ApplyStored(ep, seed, ptr(uint64(i)+3000), []uint64{uint64(i) + 4000}, seq(16, 9), 16, t0)
		switch i % 10 {
		case 3:
			ix.ApplyRemoved(ep, []uint64{uint64(i - 1), uint64(i) + 1000})
		case 7:
			ix.ApplyCleared(ep)
		}
	})
	run(1, func(g, i int) { // maintenance
		switch i % 4 {
		case 0:
			ix.Expire(t0.Add(time.Duration(i) * 20 * time.Millisecond))
		case 1:
			ix.SetCapacity(fmt.Sprintf("p%d", i%5), 100+i)
		case 2:
			_ = ix.Stats()
		case 3:
			ix.RemoveEndpoint(fmt.Sprintf("p%d", (i/4)%5))
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkConsistent(t, ix)
}

// checkConsistent verifies that per-endpoint bookkeeping and the shards agree.
func checkConsistent(t *testing.T, ix *Index) {
	t.Helper()
	held := map[uint64]map[uint32]bool{}
	total := 0
	for _, ep := range ix.reg.all() {
		ep.mu.Lock()
		if len(ep.ops) != 0 {
			t.Errorf("%s: %d shard ops left unflushed", ep.name, len(ep.ops))
		}
		if ep.observed+ep.predicted != ep.blocks.len() {
			t.Errorf("%s: observed %d + predicted %d != %d", ep.name, ep.observed, ep.predicted, ep.blocks.len())
		}
		ep.blocks.each(func(h, _ uint64) {
			if held[h] == nil {
				held[h] = map[uint32]bool{}
			}
			held[h][ep.id] = true
			total++
		})
		ep.mu.Unlock()
	}
	n := 0
	for i := range ix.s {
		ix.s[i].t.each(func(h uint64, e entry) {
			n += e.count()
			if e.empty() {
				t.Errorf("block %#x: empty entry kept", h)
			}
			for id := range held[h] {
				if !e.has(id) {
					t.Errorf("block %#x: endpoint %d missing from shard entry", h, id)
				}
			}
		})
	}
	if n != total {
		t.Errorf("shards hold %d claims, endpoints %d", n, total)
	}
}
