package kvindex

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// runOps drives an index with a pseudo-random op sequence derived from data
// and checks, after every step, that Match agrees with the per-endpoint block
// sets and that the shards agree with the endpoints.
func runOps(t *testing.T, data []byte) {
	ix := New(Options{MaxBlocksPerEndpoint: 40, PredictedTTL: 10 * time.Second})
	seed := Seed("m", "", "")
	tokens := seq(16*4, 0)
	pool := BlockHashes(nil, seed, tokens, 4) // 16 related blocks
	now := t0
	for len(data) >= 4 {
		b := data[:4]
		data = data[4:]
		ep := fmt.Sprintf("e%d", b[1]%5)
		lo, n := int(b[2]%16), int(b[3]%8)+1
		hi := min(lo+n, len(pool))
		switch b[0] % 8 {
		case 0, 1:
			ix.RecordPredicted(ep, pool[lo:hi], now)
		case 2:
			var parent *uint64
			if lo > 0 {
				parent = ptr(uint64(lo - 1))
			}
			engine := make([]uint64, hi-lo)
			for i := range engine {
				engine[i] = uint64(lo + i)
			}
			_ = ix.ApplyStored(ep, seed, parent, engine, tokens[lo*4:hi*4], 4, now)
		case 3:
			ix.ApplyRemoved(ep, []uint64{uint64(lo), uint64(hi)})
		case 4:
			now = now.Add(time.Duration(b[2]) * 100 * time.Millisecond)
		case 5:
			ix.SetCapacity(ep, int(b[2]%50))
		case 6:
			if b[2]%4 == 0 {
				ix.RemoveEndpoint(ep)
			} else {
				ix.ApplyCleared(ep)
			}
		case 7:
			ix.Expire(now)
		}
		checkMatch(t, ix, pool[lo:], now)
		checkConsistent(t, ix)
		if t.Failed() {
			t.FailNow()
		}
	}
}

// checkMatch compares Match with the longest prefix found in each
// endpoint's own block set.
func checkMatch(t *testing.T, ix *Index, chain []uint64, now time.Time) {
	t.Helper()
	got := matchMap(ix, chain, now) // expires due claims first
	for _, ep := range ix.reg.all() {
		ep.mu.Lock()
		n := 0
		for n < len(chain) {
			if _, ok := ep.blocks.get(chain[n]); !ok {
				break
			}
			n++
		}
		ep.mu.Unlock()
		if got[ep.name] != n {
			t.Errorf("%s: Match says %d blocks, endpoint holds %d", ep.name, got[ep.name], n)
		}
	}
}

func TestRandomOpsAgainstEndpointState(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		data := make([]byte, 4*200)
		for i := 0; i < len(data); i += 8 {
			binary.LittleEndian.PutUint64(data[i:], r.Uint64())
		}
		runOps(t, data)
	}
}

func FuzzIndexOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 7, 2, 1, 0, 3, 2, 1, 4, 3, 3, 1, 2, 0, 4, 200, 0, 0, 0, 2, 3, 3})
	f.Add([]byte{5, 0, 3, 0, 0, 0, 0, 7, 0, 0, 8, 7, 6, 0, 0, 0, 0, 0, 0, 7, 7, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) { runOps(t, data) })
}
