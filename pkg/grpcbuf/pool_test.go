package grpcbuf

import (
	"testing"

	"google.golang.org/grpc/mem"
)

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

// BenchmarkPoolGet40KB is one 40 KB message buffer taken, written and given
// back: Pool (a 64 KB tier, not zeroed) against gRPC's default pool (a 1 MB
// tier, zeroed on every Get). The difference is the gain Install buys per
// message on the decision path.
func BenchmarkPoolGet40KB(b *testing.B) {
	for _, tc := range []struct {
		name string
		pool mem.BufferPool
	}{{"pool=grpcbuf", &Pool{}}, {"pool=grpc-default", mem.DefaultBufferPool()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(40_000)
			for b.Loop() {
				bp := tc.pool.Get(40_000)
				copy(*bp, "x")
				tc.pool.Put(bp)
			}
		})
	}
}
