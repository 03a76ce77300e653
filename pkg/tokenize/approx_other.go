//go:build !amd64 || purego

package tokenize

// classifyText classifies text[base:base+64], which must be in range.
func classifyText(text string, base int) classMasks {
	return classifyBlock(text[base : base+blockSize])
}

// classifyBuf classifies the 64 bytes of buf.
func classifyBuf(buf *[blockSize]byte) classMasks { return classifyBlock(buf[:]) }

// load8 returns the 8 bytes text[i:i+8] little-endian.
func load8(text string, i int) uint64 { return le64(text[i : i+8]) }

// emitFast is emitFastGeneric.
func emitFast(out []uint32, text string, base int, st uint64, start int) int {
	return emitFastGeneric(out, text, base, st, start)
}
