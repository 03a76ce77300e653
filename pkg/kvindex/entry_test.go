package kvindex

import (
	"slices"
	"testing"
)

// liveIDs lists the ids an entry reports as live at t for up to 512 ids.
func liveIDs(e *entry, t int64) []uint32 {
	all, next := make([]uint64, 8), make([]uint64, 8)
	for i := range all {
		all[i] = ^uint64(0)
	}
	e.intersect(all, next, t)
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
		exp int64
	}
	tests := []struct {
		name      string
		ops       []op
		at        int64
		want      []uint32
		wantEmpty bool
	}{
		{"single", []op{{true, 3, 10}}, 5, []uint32{3}, false},
		{"single expired", []op{{true, 3, 10}}, 10, nil, false},
		{"single high id", []op{{true, 200, never}}, 5, []uint32{200}, false},
		{"re-add refreshes single", []op{{true, 3, 10}, {true, 3, 20}}, 15, []uint32{3}, false},
		{"two, one expired", []op{{true, 3, 10}, {true, 70, 20}}, 15, []uint32{70}, false},
		{"refresh among many", []op{{true, 1, 10}, {true, 2, 10}, {true, 1, 30}}, 15, []uint32{1}, false},
		{"remove to one restores inline", []op{{true, 1, 10}, {true, 130, 30}, {false, 130, 0}, {true, 1, 40}}, 35, []uint32{1}, false},
		{"remove all", []op{{true, 1, 10}, {true, 65, 10}, {false, 1, 0}, {false, 65, 0}}, 0, nil, true},
		{"remove absent", []op{{true, 1, 10}, {false, 2, 0}}, 0, []uint32{1}, false},
		{"many", []op{{true, 0, never}, {true, 63, never}, {true, 64, never}, {true, 300, 5}, {true, 511, never}},
			7, []uint32{0, 63, 64, 511}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e entry
			empty := false
			for _, o := range tc.ops {
				if o.add {
					e.add(o.id, o.exp)
					empty = false
				} else {
					empty = e.remove(o.id)
				}
			}
			if empty != tc.wantEmpty {
				t.Fatalf("empty = %v, want %v", empty, tc.wantEmpty)
			}
			if got := liveIDs(&e, tc.at); !slices.Equal(got, tc.want) {
				t.Fatalf("live = %v, want %v", got, tc.want)
			}
			if e.ext != nil && len(e.ext.exps) == 1 {
				t.Fatal("invariant: exps never holds exactly one holder")
			}
		})
	}
}
