package engine

import "math/bits"

// blockTable maps a block hash to the block caching it. It replaces a Go map
// on the engine's hottest path (every lookup, commit and eviction): it is
// sized once for the pool, which holds at most one hash per block, so it
// never grows; it probes linearly through one flat slice; and it deletes by
// shifting later entries back, so constant churn leaves no tombstones to
// probe past.
type blockTable struct {
	slots []tableSlot
	mask  int
	shift uint // 64 - log2(len(slots)), for Fibonacci hashing
}

type tableSlot struct {
	hash uint64
	id1  int32 // block id + 1; 0 marks an empty slot
}

// newBlockTable sizes the table for n entries at a load factor of at most 1/2.
func newBlockTable(n int) blockTable {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	return blockTable{slots: make([]tableSlot, size), mask: size - 1,
		shift: uint(64 - bits.TrailingZeros(uint(size)))}
}

// home is h's preferred slot. Block hashes are already mixed; the multiply
// keeps the table sound for any input.
func (t *blockTable) home(h uint64) int {
	return int((h * 0x9E3779B97F4A7C15) >> t.shift)
}

// find returns the slot holding h, or the empty slot where h would go.
func (t *blockTable) find(h uint64) (int, bool) {
	i := t.home(h)
	for {
		s := &t.slots[i]
		if s.id1 == 0 {
			return i, false
		}
		if s.hash == h {
			return i, true
		}
		i = (i + 1) & t.mask
	}
}

// get returns the block caching h.
func (t *blockTable) get(h uint64) (int32, bool) {
	i, ok := t.find(h)
	return t.slots[i].id1 - 1, ok
}

// putAt stores h -> id in slot i, an empty slot find returned for h.
func (t *blockTable) putAt(i int, h uint64, id int32) {
	t.slots[i] = tableSlot{hash: h, id1: id + 1}
}

// remove deletes h if present.
func (t *blockTable) remove(h uint64) {
	if i, ok := t.find(h); ok {
		t.removeAt(i)
	}
}

// removeAt empties slot i, then moves back each later entry of the probe run
// whose home lies at or before the hole, so every entry stays reachable from
// its home without crossing an empty slot.
func (t *blockTable) removeAt(i int) {
	for j := (i + 1) & t.mask; t.slots[j].id1 != 0; j = (j + 1) & t.mask {
		home := t.home(t.slots[j].hash)
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = tableSlot{}
}

// reset empties the table.
func (t *blockTable) reset() { clear(t.slots) }
