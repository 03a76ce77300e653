package tokenize

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestClassifyMatchesTable checks the platform classifier (SSE2 on amd64)
// against the portable table one, on every byte value at every offset.
func TestClassifyMatchesTable(t *testing.T) {
	var buf [blockSize]byte
	check := func() {
		t.Helper()
		want := classifyBlock(buf[:])
		if got := classifyBuf(&buf); got != want {
			t.Fatalf("classify(%q) = %+v, want %+v", buf, got, want)
		}
		if got := classifyText("xy"+string(buf[:]), 2); got != want {
			t.Fatalf("classifyText(%q) = %+v, want %+v", buf, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		for k := range buf {
			buf[k] = byte(c + k*k)
		}
		check()
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		for k := range buf {
			buf[k] = byte(rng.Uint32())
		}
		check()
	}
}

// TestEmitFastMatchesGeneric checks the platform emit loop (assembly on
// amd64) against the Go one on random start bitmaps: pieces of 1 to 8 bytes.
func TestEmitFastMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 3*blockSize)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	text := string(buf)
	for i := 0; i < 2000; i++ {
		// Starts at most 8 bytes apart, the open piece begun before the block.
		var st uint64
		start := blockSize - 8 + rng.IntN(8)
		for p := blockSize + rng.IntN(8); p < 2*blockSize; p += 1 + rng.IntN(8) {
			st |= 1 << (p - blockSize)
		}
		n := bits.OnesCount64(st)
		got, want := make([]uint32, n), make([]uint32, n)
		gs := emitFast(got, text, blockSize, st, start)
		ws := emitFastGeneric(want, text, blockSize, st, start)
		if gs != ws || !slices.Equal(got, want) {
			t.Fatalf("st %#x start %d: emitFast = %d %v, want %d %v", st, start, gs, got, ws, want)
		}
	}
}
