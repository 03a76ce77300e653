package tokenize

import (
	"math/rand/v2"
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
