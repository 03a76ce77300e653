//go:build !amd64 || purego

package tokenize

// classifyText classifies text[base:base+64], which must be in range.
func classifyText(text string, base int) classMasks {
	return classifyBlock(text[base : base+blockSize])
}

// classifyBuf classifies the 64 bytes of buf.
func classifyBuf(buf *[blockSize]byte) classMasks { return classifyBlock(buf[:]) }

// emitFast is emitFastGeneric.
func emitFast(out []uint32, text string, base int, st uint64, start int) int {
	return emitFastGeneric(out, text, base, st, start)
}
