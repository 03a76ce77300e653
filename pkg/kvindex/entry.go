package kvindex

import (
	"math"
	"math/bits"
)

// never is the expiry of entries that do not expire (observed ones).
const never = int64(math.MaxInt64)

// entry is the global record for one block: which interned endpoints hold it
// and when their claims expire. It is stored by value in a shard map; the
// common case (one holder with id < 64) needs no extra allocation.
type entry struct {
	lo     uint64    // holder ids 0..63
	minExp int64     // earliest expiry over holders (UnixNano); never if none expire
	ext    *entryExt // ids >= 64 and per-holder expiries; nil in the common case
}

// entryExt holds what does not fit inline. Invariant: with two or more
// holders exps lists exactly them; with one, exps is empty and the holder's
// expiry is entry.minExp.
type entryExt struct {
	hi   []uint64 // holder ids >= 64: bit id-64
	exps []holderExp
}

type holderExp struct {
	id  uint32
	exp int64
}

// word returns the holder bits for ids [64w, 64w+64).
func (e *entry) word(w int) uint64 {
	if w == 0 {
		return e.lo
	}
	if e.ext == nil || w-1 >= len(e.ext.hi) {
		return 0
	}
	return e.ext.hi[w-1]
}

func (e *entry) count() int {
	n := bits.OnesCount64(e.lo)
	if e.ext != nil {
		for _, w := range e.ext.hi {
			n += bits.OnesCount64(w)
		}
	}
	return n
}

func (e *entry) has(id uint32) bool {
	return e.word(int(id>>6))&(1<<(id&63)) != 0
}

func (e *entry) setBit(id uint32, on bool) {
	w, m := int(id>>6), uint64(1)<<(id&63)
	p := &e.lo
	if w > 0 {
		if e.ext == nil {
			e.ext = &entryExt{}
		}
		for len(e.ext.hi) < w {
			e.ext.hi = append(e.ext.hi, 0)
		}
		p = &e.ext.hi[w-1]
	}
	if on {
		*p |= m
	} else {
		*p &^= m
	}
}

// onlyHolder returns the id of the single holder; valid when count() == 1.
func (e *entry) onlyHolder() uint32 {
	if e.lo != 0 {
		return uint32(bits.TrailingZeros64(e.lo))
	}
	for i, w := range e.ext.hi {
		if w != 0 {
			return uint32(64*(i+1) + bits.TrailingZeros64(w))
		}
	}
	return 0
}

// add makes id a holder with the given expiry (replacing an earlier one).
func (e *entry) add(id uint32, exp int64) {
	switch n := e.count(); {
	case n == 0:
		e.minExp = exp
	case n == 1 && e.has(id):
		e.minExp = exp
		return
	default:
		if e.ext == nil {
			e.ext = &entryExt{}
		}
		if len(e.ext.exps) == 0 {
			e.ext.exps = append(e.ext.exps, holderExp{e.onlyHolder(), e.minExp})
		}
		e.upsertExp(id, exp)
	}
	e.setBit(id, true)
}

func (e *entry) upsertExp(id uint32, exp int64) {
	found := false
	e.minExp = never
	for i := range e.ext.exps {
		if e.ext.exps[i].id == id {
			e.ext.exps[i].exp, found = exp, true
		}
		e.minExp = min(e.minExp, e.ext.exps[i].exp)
	}
	if !found {
		e.ext.exps = append(e.ext.exps, holderExp{id, exp})
		e.minExp = min(e.minExp, exp)
	}
}

// remove drops id as a holder and reports whether the entry is now empty.
func (e *entry) remove(id uint32) (empty bool) {
	if e.has(id) {
		e.setBit(id, false)
		if e.ext != nil && len(e.ext.exps) > 0 {
			e.dropExp(id)
		}
	}
	if e.ext != nil && len(e.ext.exps) == 0 && !anySet(e.ext.hi) {
		e.ext = nil
	}
	return e.count() == 0
}

// dropExp removes id's expiry; one remaining holder goes back inline.
func (e *entry) dropExp(id uint32) {
	exps := e.ext.exps[:0]
	e.minExp = never
	for _, h := range e.ext.exps {
		if h.id != id {
			exps = append(exps, h)
			e.minExp = min(e.minExp, h.exp)
		}
	}
	if len(exps) == 1 {
		exps = exps[:0]
	}
	e.ext.exps = exps
}

// intersect sets next = active ∩ {holders whose claim is live at t} and reports
// whether next is non-empty. len(next) == len(active).
func (e *entry) intersect(active, next []uint64, t int64) bool {
	if e.minExp <= t && (e.ext == nil || len(e.ext.exps) == 0) {
		clear(next) // the single holder's claim expired
		return false
	}
	var any uint64
	for w := range active {
		next[w] = active[w] & e.word(w)
		any |= next[w]
	}
	if any == 0 || e.minExp > t {
		return any != 0
	}
	for _, h := range e.ext.exps {
		if h.exp <= t && int(h.id>>6) < len(next) {
			next[h.id>>6] &^= 1 << (h.id & 63)
		}
	}
	return anySet(next)
}

func anySet(words []uint64) bool {
	for _, w := range words {
		if w != 0 {
			return true
		}
	}
	return false
}
