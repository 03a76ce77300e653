package endpoints

import "testing"

func TestIndexEntries(t *testing.T) {
	cases := []struct {
		total, stride, want int
	}{
		{0, 4, 0},       // unknown: the index's default bound
		{-3, 1, 0},      // nonsense stays unknown
		{1000, 1, 1000}, // events path: every block
		{1000, 4, 250},  // predicted path: every 4th block
		{3, 4, 1},       // never zero once known
		{1000, 0, 1000}, // a zero stride counts as 1
		{1001, 4, 250},  // a partial stride holds no entry
		{4096, 16, 256},
	}
	for _, tc := range cases {
		if got := (Capacity{TotalBlocks: tc.total}).IndexEntries(tc.stride); got != tc.want {
			t.Errorf("IndexEntries(total %d, stride %d) = %d, want %d", tc.total, tc.stride, got, tc.want)
		}
	}
}
