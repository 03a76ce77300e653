//go:build !purego

package tokenize

import (
	"math/bits"
	"unsafe"
)

// classify64 classifies the 64 bytes at p with SSE2 (part of the amd64
// baseline): 16 bytes per compare, 6x fewer instructions than the table.
// Gain: BenchmarkApprox32KB / BenchmarkApprox220KB against the same with
// -tags purego (issue 9: ~22 µs vs ~60-80 µs for 32 KB, about 3x). The
// approximate tokenizer is the events path's default and modelsim's, so it
// stays although the predicted path's default ("bytes") does not use it.
//
//go:noescape
func classify64(p *byte) classMasks

// classifyText classifies text[base:base+64], which must be in range.
func classifyText(text string, base int) classMasks {
	return classify64(unsafe.StringData(text[base : base+blockSize]))
}

// classifyBuf classifies the 64 bytes of buf.
func classifyBuf(buf *[blockSize]byte) classMasks { return classify64(&buf[0]) }

// emit64 is emitFastGeneric in assembly; see emitFast.
//
//go:noescape
func emit64(out *uint32, text *byte, base int, st uint64, start int) int

// emitFast is emitFastGeneric without bounds checks or spills (a quarter
// fewer instructions per piece). The promises the assembly relies on are
// checked here, falling back to the checked Go loop if one fails.
func emitFast(out []uint32, text string, base int, st uint64, start int) int {
	if len(out) != bits.OnesCount64(st) || base < 0 || uint(start) > uint(base+blockSize) ||
		base > len(text)-blockSize-8 {
		return emitFastGeneric(out, text, base, st, start)
	}
	return emit64(unsafe.SliceData(out), unsafe.StringData(text), base, st, start)
}
