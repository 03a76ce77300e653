package engine

import (
	"math/rand/v2"
	"testing"
)

// TestBlockTableMatchesMap drives the table and a Go map with the same
// random puts and removes and checks every key agrees, including keys that
// collide on their home slot (the low-entropy cases exercise probe runs that
// wrap around and backward-shift deletion).
func TestBlockTableMatchesMap(t *testing.T) {
	cases := []struct {
		name string
		n    int
		key  func(r *rand.Rand) uint64
	}{
		{"random", 1000, func(r *rand.Rand) uint64 { return r.Uint64() }},
		{"few keys", 64, func(r *rand.Rand) uint64 { return r.Uint64N(100) }},
		{"tiny", 3, func(r *rand.Rand) uint64 { return r.Uint64N(8) }},
		{"zero key", 4, func(r *rand.Rand) uint64 { return r.Uint64N(2) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			tab, ref := newBlockTable(tc.n), map[uint64]int32{}
			for op := range 20 * tc.n {
				h := tc.key(r)
				if _, ok := ref[h]; ok || len(ref) >= tc.n || r.IntN(3) == 0 {
					tab.remove(h)
					delete(ref, h)
				} else {
					i, found := tab.find(h)
					if found {
						t.Fatalf("op %d: find(%d) found an absent key", op, h)
					}
					tab.putAt(i, h, int32(op))
					ref[h] = int32(op)
				}
				checkTable(t, &tab, ref)
			}
		})
	}
}

func checkTable(t *testing.T, tab *blockTable, ref map[uint64]int32) {
	t.Helper()
	n := 0
	for _, s := range tab.slots {
		if s.id1 == 0 {
			continue
		}
		n++
		if want, ok := ref[s.hash]; !ok || want != s.id1-1 {
			t.Fatalf("table holds %d -> %d, map has %d (%v)", s.hash, s.id1-1, want, ok)
		}
	}
	if n != len(ref) {
		t.Fatalf("table holds %d entries, map %d", n, len(ref))
	}
	for h, want := range ref {
		if got, ok := tab.get(h); !ok || got != want {
			t.Fatalf("get(%d) = %d, %v; want %d", h, got, ok, want)
		}
	}
}

func TestBlockTableReset(t *testing.T) {
	tab := newBlockTable(4)
	i, _ := tab.find(7)
	tab.putAt(i, 7, 3)
	tab.reset()
	if _, ok := tab.get(7); ok {
		t.Fatal("get after reset found the key")
	}
}
