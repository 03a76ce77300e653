package kvindex

import (
	"math/rand/v2"
	"slices"
	"sync"
	"unsafe"
)

// shardBits sets the number of global shards (1<<shardBits). Readers and
// writers both visit blocks grouped by shard and take each shard's lock once
// per batch, so fewer, busier shards cost less than many lock round trips.
const shardBits = 4

const nShards = 1 << shardBits

type shard struct {
	mu sync.RWMutex
	t  table[entry]
	_  [64 - (unsafe.Sizeof(sync.RWMutex{})+unsafe.Sizeof(table[entry]{}))%64]byte // one shard per cache line
}

type shards [nShards]shard

func newShards() *shards {
	s := new(shards)
	for i := range s {
		s[i].t = newTable[entry](rand.Uint64())
	}
	return s
}

// idx picks a shard from the top bits: our hashes are already uniform.
func idx(h uint64) int { return int(h >> (64 - shardBits)) }

// op is one pending change of an endpoint's claim on a block.
type op struct {
	h   uint64
	del bool
}

// apply runs ops for endpoint id, taking each shard's write lock once. Ops on
// the same block keep their relative order. buf is scratch, returned for reuse.
func (s *shards) apply(id uint32, ops, buf []op) []op {
	var start [nShards + 1]int
	for _, o := range ops {
		start[idx(o.h)+1]++
	}
	for k := 1; k <= nShards; k++ {
		start[k] += start[k-1]
	}
	buf = slices.Grow(buf[:0], len(ops))[:len(ops)]
	pos := start
	for _, o := range ops {
		k := idx(o.h)
		buf[pos[k]] = o
		pos[k]++
	}
	for k := range s {
		if start[k] < start[k+1] {
			s[k].applyLocked(id, buf[start[k]:start[k+1]])
		}
	}
	return buf
}

func (sh *shard) applyLocked(id uint32, ops []op) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, o := range ops {
		if !o.del {
			e, _ := sh.t.upsert(o.h)
			e.set(id, true)
			continue
		}
		if e := sh.t.ptr(o.h); e != nil {
			e.set(id, false)
			if e.empty() {
				sh.t.del(o.h)
			}
		}
	}
}

// gather sets masks[j*nw:(j+1)*nw] = active ∩ holders of hs[j] for every j
// (nw = len(active) > 0), taking each shard's read lock once.
// len(hs) must not exceed maxWindow.
func (s *shards) gather(hs []uint64, active, masks []uint64) {
	var start [nShards + 1]uint8
	var order [maxWindow]uint8
	for _, h := range hs {
		start[idx(h)+1]++
	}
	for k := 1; k <= nShards; k++ {
		start[k] += start[k-1]
	}
	pos := start
	for j, h := range hs {
		k := idx(h)
		order[pos[k]] = uint8(j)
		pos[k]++
	}
	nw := len(active)
	for k := range s {
		if start[k] == start[k+1] {
			continue
		}
		sh := &s[k]
		sh.mu.RLock()
		for _, j := range order[start[k]:start[k+1]] {
			mask := masks[int(j)*nw : int(j+1)*nw]
			if e, ok := sh.t.get(hs[j]); ok {
				e.intersect(active, mask)
			} else {
				clear(mask)
			}
		}
		sh.mu.RUnlock()
	}
}

// has reports whether anyone holds h (an entry is deleted when its last
// holder leaves).
func (s *shards) has(h uint64) bool {
	sh := &s[idx(h)]
	sh.mu.RLock()
	_, ok := sh.t.get(h)
	sh.mu.RUnlock()
	return ok
}

// blocks counts distinct blocks held by anyone.
func (s *shards) blocks() int {
	n := 0
	for i := range s {
		s[i].mu.RLock()
		n += s[i].t.len()
		s[i].mu.RUnlock()
	}
	return n
}
