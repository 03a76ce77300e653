package grpcbuf

import "testing"

func TestPool(t *testing.T) {
	var p Pool
	tests := []struct {
		n, wantCap int
	}{
		{0, 256}, {1, 256}, {256, 256}, {257, 512}, {16 << 10, 16 << 10}, {16<<10 + 1, 32 << 10},
		{40_000, 64 << 10}, {1 << 26, 1 << 26}, {1<<26 + 1, 1<<26 + 1},
	}
	for _, tc := range tests {
		bp := p.Get(tc.n)
		if len(*bp) != tc.n || cap(*bp) != tc.wantCap {
			t.Fatalf("Get(%d): len %d cap %d, want cap %d", tc.n, len(*bp), cap(*bp), tc.wantCap)
		}
		(*bp)[:cap(*bp)][cap(*bp)-1] = 7 // the whole capacity is usable
		p.Put(bp)
	}
	// A buffer put back serves a later request of its tier, at the requested length.
	bp := p.Get(3000)
	(*bp)[0] = 42
	p.Put(bp)
	got := p.Get(2100)
	if len(*got) != 2100 || cap(*got) != 4096 {
		t.Fatalf("reused buffer len %d cap %d", len(*got), cap(*got))
	}
	// Foreign capacities are dropped, not put into a tier they do not fill.
	odd := make([]byte, 3000)
	p.Put(&odd)
	small := make([]byte, 10)
	p.Put(&small)
	for range 100 {
		if b := p.Get(4096); cap(*b) != 4096 {
			t.Fatalf("tier 4096 handed out cap %d", cap(*b))
		}
	}
}
