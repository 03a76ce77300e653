package kvindex

import (
	"slices"
	"testing"
)

// holderIDs lists the ids an entry reports for up to 512 ids.
func holderIDs(e entry) []uint32 {
	all, next := make([]uint64, 8), make([]uint64, 8)
	for i := range all {
		all[i] = ^uint64(0)
	}
	e.intersect(all, next)
	var ids []uint32
	for id := uint32(0); id < 512; id++ {
		if next[id>>6]&(1<<(id&63)) != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestEntry(t *testing.T) {
	type op struct {
		add bool
		id  uint32
	}
	tests := []struct {
		name string
		ops  []op
		want []uint32
	}{
		{"single", []op{{true, 3}}, []uint32{3}},
		{"single high id", []op{{true, 200}}, []uint32{200}},
		{"idempotent add", []op{{true, 3}, {true, 3}}, []uint32{3}},
		{"word edges", []op{{true, 0}, {true, 63}, {true, 64}, {true, 127}, {true, 128}, {true, 511}},
			[]uint32{0, 63, 64, 127, 128, 511}},
		{"remove", []op{{true, 1}, {true, 130}, {false, 130}}, []uint32{1}},
		{"remove all", []op{{true, 1}, {true, 65}, {false, 1}, {false, 65}}, nil},
		{"remove absent", []op{{true, 1}, {false, 2}, {false, 300}}, []uint32{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e entry
			for _, o := range tc.ops {
				e.set(o.id, o.add)
			}
			got := holderIDs(e)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("holders = %v, want %v", got, tc.want)
			}
			if e.count() != len(tc.want) || e.empty() != (len(tc.want) == 0) {
				t.Fatalf("count = %d, empty = %v for %v", e.count(), e.empty(), tc.want)
			}
			for _, id := range tc.want {
				if !e.has(id) {
					t.Fatalf("has(%d) = false", id)
				}
			}
		})
	}
}

func TestEntryIntersectRestricts(t *testing.T) {
	var e entry
	for _, id := range []uint32{2, 5, 70, 140} {
		e.set(id, true)
	}
	active := []uint64{1<<5 | 1<<9, 0, 1 << 12}
	next := make([]uint64, 3)
	if !e.intersect(active, next) || next[0] != 1<<5 || next[1] != 0 || next[2] != 1<<12 {
		t.Fatalf("next = %b", next)
	}
	if e.intersect([]uint64{1 << 9}, next[:1]) {
		t.Fatal("disjoint sets intersect")
	}
}
