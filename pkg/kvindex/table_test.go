package kvindex

import (
	"math/rand/v2"
	"testing"
)

// TestTableAgainstMap drives the table and a Go map with the same random
// inserts and deletes (small key space, so probe runs collide and wrap) and
// compares them after every step.
func TestTableAgainstMap(t *testing.T) {
	for _, keySpace := range []uint64{8, 64, 5000} {
		r := rand.New(rand.NewPCG(keySpace, 9))
		tab, ref := newTable[uint64](r.Uint64()), map[uint64]uint64{}
		for step := 0; step < 20000; step++ {
			h := r.Uint64N(keySpace) // includes 0
			if r.IntN(3) == 0 {
				tab.del(h)
				delete(ref, h)
			} else {
				v, _ := tab.upsert(h)
				*v = h + 1
				ref[h] = h + 1
			}
			if tab.len() != len(ref) {
				t.Fatalf("space %d step %d: len %d, want %d", keySpace, step, tab.len(), len(ref))
			}
			probe := r.Uint64N(keySpace)
			e, ok := tab.get(probe)
			if want, wok := ref[probe]; ok != wok || (ok && e != want) {
				t.Fatalf("space %d step %d: get(%d) = %v %v, want %v %v", keySpace, step, probe, e, ok, want, wok)
			}
		}
		n := 0
		tab.each(func(h uint64, v uint64) {
			n++
			if ref[h] != v {
				t.Fatalf("each: %d -> %d, want %d", h, v, ref[h])
			}
		})
		if n != len(ref) {
			t.Fatalf("each visited %d, want %d", n, len(ref))
		}
	}
}

func TestTableShrinks(t *testing.T) {
	tab := newTable[uint64](3)
	for h := uint64(1); h <= 10000; h++ {
		tab.upsert(h)
	}
	grown := len(tab.slots)
	for h := uint64(1); h <= 9990; h++ {
		tab.del(h)
	}
	if len(tab.slots) >= grown/4 || tab.len() != 10 {
		t.Fatalf("slots %d after deletes (was %d), len %d", len(tab.slots), grown, tab.len())
	}
	for h := uint64(9991); h <= 10000; h++ {
		if _, ok := tab.get(h); !ok {
			t.Fatalf("lost %d while shrinking", h)
		}
	}
}
