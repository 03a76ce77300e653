package kvindex

import "math/bits"

// entry is the global record for one block: the set of interned endpoint ids
// holding it. It is stored by value in a shard map; ids below 64 (the common
// case) need no allocation. Expiry is not kept here: expired claims are
// removed from the shards before any Match can see them (see expireDue).
type entry struct {
	lo uint64    // holder ids 0..63
	hi *[]uint64 // holder ids >= 64: bit id-64; nil when none ever set
}

// word returns the holder bits for ids [64w, 64w+64).
func (e entry) word(w int) uint64 {
	if w == 0 {
		return e.lo
	}
	if e.hi == nil || w-1 >= len(*e.hi) {
		return 0
	}
	return (*e.hi)[w-1]
}

func (e entry) empty() bool {
	return e.lo == 0 && (e.hi == nil || !anySet(*e.hi))
}

func (e entry) count() int {
	n := bits.OnesCount64(e.lo)
	if e.hi != nil {
		for _, w := range *e.hi {
			n += bits.OnesCount64(w)
		}
	}
	return n
}

func (e entry) has(id uint32) bool {
	return e.word(int(id>>6))&(1<<(id&63)) != 0
}

// set adds or removes id. It mutates *e.hi in place, so callers hold the
// shard's write lock.
func (e *entry) set(id uint32, on bool) {
	w, m := int(id>>6), uint64(1)<<(id&63)
	p := &e.lo
	if w > 0 {
		if e.hi == nil {
			if !on {
				return
			}
			e.hi = new([]uint64)
		}
		for len(*e.hi) < w {
			*e.hi = append(*e.hi, 0)
		}
		p = &(*e.hi)[w-1]
	}
	if on {
		*p |= m
	} else {
		*p &^= m
	}
}

// intersect sets next = active ∩ holders and reports whether it is non-empty.
// len(next) == len(active).
func (e entry) intersect(active, next []uint64) bool {
	next[0] = active[0] & e.lo
	any := next[0]
	for w := 1; w < len(active); w++ {
		next[w] = 0
		if active[w] != 0 { // skip the pointer chase for settled words
			next[w] = active[w] & e.word(w)
			any |= next[w]
		}
	}
	return any != 0
}

func anySet(words []uint64) bool {
	for _, w := range words {
		if w != 0 {
			return true
		}
	}
	return false
}
