package kvindex

import "math/bits"

// table is an open-addressing hash table (linear probing, backward-shift
// deletion, no tombstones) from block hash to V. Rent: BenchmarkTableVsMap
// (time per lookup, heap per entry against a Go map) and
// BenchmarkBytesPerBlock. It is cheaper than a Go map
// for this one job: keys are already hashes, slots are small and a lookup is
// usually one probe. Not safe for concurrent use; its owner's lock guards it.
// Key 0 marks an empty slot, so a block hashed to 0 lives in zero.
type table[V any] struct {
	slots   []slot[V]
	n       int    // occupied slots
	salt    uint64 // random odd multiplier: probe positions are not predictable from prompts
	zero    V
	hasZero bool
}

type slot[V any] struct {
	key uint64
	v   V
}

const minTableSize = 16

func newTable[V any](salt uint64) table[V] {
	return table[V]{slots: make([]slot[V], minTableSize), salt: salt | 1}
}

// home is the preferred slot of h.
func (t *table[V]) home(h uint64) int {
	hi, lo := bits.Mul64(h, t.salt)
	return int((hi ^ lo) & uint64(len(t.slots)-1))
}

// find returns the slot index of h (h != 0), or -1.
func (t *table[V]) find(h uint64) int {
	mask := len(t.slots) - 1
	for i := t.home(h); ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case h:
			return i
		case 0:
			return -1
		}
	}
}

// get returns h's entry.
func (t *table[V]) get(h uint64) (V, bool) {
	if h == 0 {
		return t.zero, t.hasZero
	}
	if i := t.find(h); i >= 0 {
		return t.slots[i].v, true
	}
	var none V
	return none, false
}

// ptr returns a pointer to h's entry, or nil. The pointer is valid until the
// next upsert or del.
func (t *table[V]) ptr(h uint64) *V {
	if h == 0 {
		if t.hasZero {
			return &t.zero
		}
		return nil
	}
	if i := t.find(h); i >= 0 {
		return &t.slots[i].v
	}
	return nil
}

// upsert returns a pointer to h's value, inserting a zero one if absent, and
// whether it existed. The pointer is valid until the next upsert or del.
func (t *table[V]) upsert(h uint64) (*V, bool) {
	if h == 0 {
		had := t.hasZero
		t.hasZero = true
		return &t.zero, had
	}
	if i := t.find(h); i >= 0 {
		return &t.slots[i].v, true
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(2 * len(t.slots))
	}
	mask := len(t.slots) - 1
	i := t.home(h)
	for t.slots[i].key != 0 {
		i = (i + 1) & mask
	}
	t.slots[i].key = h
	t.n++
	return &t.slots[i].v, false
}

// del removes h, shifting later members of its probe run back so lookups
// never need tombstones.
func (t *table[V]) del(h uint64) {
	if h == 0 {
		var none V
		t.zero, t.hasZero = none, false
		return
	}
	i := t.find(h)
	if i < 0 {
		return
	}
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		// Move slot j into the hole at i unless its home lies cyclically in (i, j].
		if k := t.home(t.slots[j].key); (j-k)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot[V]{}
	t.n--
	if len(t.slots) > 1024 && 8*t.n < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

func (t *table[V]) resize(size int) {
	old := t.slots
	t.slots = make([]slot[V], size)
	mask := size - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		i := t.home(s.key)
		for t.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// len returns the number of entries.
func (t *table[V]) len() int {
	if t.hasZero {
		return t.n + 1
	}
	return t.n
}

// each calls f for every entry; f must not modify the table.
func (t *table[V]) each(f func(h uint64, v V)) {
	if t.hasZero {
		f(0, t.zero)
	}
	for _, s := range t.slots {
		if s.key != 0 {
			f(s.key, s.v)
		}
	}
}
