package kvindex

import "math/bits"

// table is an open-addressing hash table (linear probing, backward-shift
// deletion, no tombstones) from block hash to entry. It is cheaper than a Go
// map for this one job: keys are already hashes, a slot is 24 bytes and a
// lookup is usually one probe. Not safe for concurrent use; the shard's lock
// guards it. Key 0 marks an empty slot, so a block hashed to 0 lives in zero.
type table struct {
	slots   []slot
	n       int    // occupied slots
	salt    uint64 // per-table random odd multiplier: probe positions are not predictable from prompts
	zero    entry
	hasZero bool
}

type slot struct {
	key uint64
	e   entry
}

const minTableSize = 16

func newTable(salt uint64) table {
	return table{slots: make([]slot, minTableSize), salt: salt | 1}
}

// home is the preferred slot of h.
func (t *table) home(h uint64) int {
	hi, lo := bits.Mul64(h, t.salt)
	return int((hi ^ lo) & uint64(len(t.slots)-1))
}

// find returns the slot index of h (h != 0), or -1.
func (t *table) find(h uint64) int {
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
func (t *table) get(h uint64) (entry, bool) {
	if h == 0 {
		return t.zero, t.hasZero
	}
	if i := t.find(h); i >= 0 {
		return t.slots[i].e, true
	}
	return entry{}, false
}

// ptr returns a pointer to h's entry, or nil. The pointer is valid until the
// next upsert or del.
func (t *table) ptr(h uint64) *entry {
	if h == 0 {
		if t.hasZero {
			return &t.zero
		}
		return nil
	}
	if i := t.find(h); i >= 0 {
		return &t.slots[i].e
	}
	return nil
}

// upsert returns a pointer to h's entry, inserting an empty one if absent.
// The pointer is valid until the next upsert or del.
func (t *table) upsert(h uint64) *entry {
	if h == 0 {
		t.hasZero = true
		return &t.zero
	}
	if i := t.find(h); i >= 0 {
		return &t.slots[i].e
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
	return &t.slots[i].e
}

// del removes h, shifting later members of its probe run back so lookups
// never need tombstones.
func (t *table) del(h uint64) {
	if h == 0 {
		t.zero, t.hasZero = entry{}, false
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
	t.slots[i] = slot{}
	t.n--
	if len(t.slots) > 1024 && 8*t.n < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

func (t *table) resize(size int) {
	old := t.slots
	t.slots = make([]slot, size)
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
func (t *table) len() int {
	if t.hasZero {
		return t.n + 1
	}
	return t.n
}

// each calls f for every entry (tests and diagnostics).
func (t *table) each(f func(h uint64, e entry)) {
	if t.hasZero {
		f(0, t.zero)
	}
	for _, s := range t.slots {
		if s.key != 0 {
			f(s.key, s.e)
		}
	}
}
