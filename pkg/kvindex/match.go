package kvindex

import (
	"math/bits"
	"time"
)

// stackWords covers 256 endpoints without allocating the working sets.
const stackWords = 4

// Windows of the chain are looked up together, one lock per shard per
// window; they double from firstWindow so a short match costs little.
const (
	firstWindow = 8
	maxWindow   = 128
)

// Match appends to dst, for every endpoint holding at least chain[0], the
// number of leading blocks of chain it holds without a hole. Order is
// arbitrary. Predicted claims whose TTL ran out by now are dropped first
// (the work Expire does, done here only for endpoints that have some due),
// so results never include them. The walk intersects the set of
// still-matching endpoints with each block's holders and stops when the set
// is empty; it takes shard read locks only (once per shard per window) and
// allocates nothing beyond dst for up to 256 interned endpoints.
func (ix *Index) Match(chain []uint64, now time.Time, dst []Overlap) []Overlap {
	eps := ix.expireDue(now.UnixNano())
	nw := (len(eps) + 63) / 64
	if len(chain) == 0 || nw == 0 {
		return dst
	}
	var abuf, nbuf [stackWords]uint64
	var mbuf [stackWords * maxWindow]uint64
	active, next, masks := abuf[:], nbuf[:], mbuf[:]
	if nw > stackWords {
		active, next, masks = make([]uint64, nw), make([]uint64, nw), make([]uint64, nw*maxWindow)
	}
	active, next = active[:nw], next[:nw]
	for i := range active {
		active[i] = ^uint64(0)
	}
	for pos, win := 0, firstWindow; pos < len(chain); pos, win = pos+win, min(2*win, maxWindow) {
		hs := chain[pos:min(pos+win, len(chain))]
		ix.s.gather(hs, active, masks)
		for j := range hs {
			more := false
			for w := range next {
				next[w] = active[w] & masks[j*nw+w]
				more = more || next[w] != 0
			}
			dst = emit(dst, eps, active, next, pos+j)
			if !more {
				return dst
			}
			active, next = next, active
		}
	}
	return emit(dst, eps, active, nil, len(chain))
}

// expireDue expires endpoints whose oldest predicted claim is due at t and
// returns the id -> endpoint snapshot to report names from.
func (ix *Index) expireDue(t int64) []*endpoint {
	eps := *ix.reg.eps.Load()
	for _, ep := range eps {
		if ep != nil && ep.nextDue.Load() <= t {
			ix.expireOne(ep, t)
		}
	}
	return eps
}

// emit appends an Overlap of n blocks for every endpoint in active but not in
// next (nil next: every endpoint in active).
func emit(dst []Overlap, eps []*endpoint, active, next []uint64, n int) []Overlap {
	if n == 0 {
		return dst
	}
	for w, a := range active {
		if next != nil {
			a &^= next[w]
		}
		for a != 0 {
			id := w*64 + bits.TrailingZeros64(a)
			a &= a - 1
			if id < len(eps) && eps[id] != nil {
				dst = append(dst, Overlap{Endpoint: eps[id].name, Blocks: n})
			}
		}
	}
	return dst
}
