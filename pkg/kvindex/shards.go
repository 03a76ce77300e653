package kvindex

import (
	"sync"
	"unsafe"
)

// shardBits sets the number of global shards (1<<shardBits). Readers take one
// shard's read lock per block, so writers on other shards never block them.
const shardBits = 6

type shard struct {
	mu sync.RWMutex
	m  map[uint64]entry
	_  [64 - (unsafe.Sizeof(sync.RWMutex{})+8)%64]byte // one shard per cache line
}

type shards [1 << shardBits]shard

func newShards() *shards {
	s := new(shards)
	for i := range s {
		s[i].m = make(map[uint64]entry)
	}
	return s
}

// of picks a shard from the top bits: our hashes are already uniform.
func (s *shards) of(h uint64) *shard { return &s[h>>(64-shardBits)] }

// add records id as a holder of h with expiry exp.
func (s *shards) add(h uint64, id uint32, exp int64) {
	sh := s.of(h)
	sh.mu.Lock()
	e := sh.m[h]
	e.add(id, exp)
	sh.m[h] = e
	sh.mu.Unlock()
}

// remove drops id as a holder of h, deleting the block when nobody holds it.
func (s *shards) remove(h uint64, id uint32) {
	sh := s.of(h)
	sh.mu.Lock()
	if e, ok := sh.m[h]; ok {
		if e.remove(id) {
			delete(sh.m, h)
		} else {
			sh.m[h] = e
		}
	}
	sh.mu.Unlock()
}

// intersect computes next = active ∩ live holders of h at t (see entry.intersect).
func (s *shards) intersect(h uint64, active, next []uint64, t int64) bool {
	sh := s.of(h)
	sh.mu.RLock()
	e, ok := sh.m[h]
	found := ok && e.intersect(active, next, t)
	sh.mu.RUnlock()
	if !ok {
		clear(next)
	}
	return found
}

// blocks counts distinct blocks held by anyone.
func (s *shards) blocks() int {
	n := 0
	for i := range s {
		s[i].mu.RLock()
		n += len(s[i].m)
		s[i].mu.RUnlock()
	}
	return n
}
