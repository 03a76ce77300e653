package request

import "sync"

// The prompt is rendered into a pooled, body-sized scratch buffer and then
// copied once into a string of exactly its length. The copy costs less than
// what it replaces: a fresh body-sized buffer per request had to be zeroed,
// was usually a large (>32 KiB) allocation from the locked page heap even
// when the prompt itself fits a small size class, and kept the unused part
// of its capacity alive with the Request. The string conversion allocates
// without zeroing.

// maxPooled bounds the buffers kept for reuse, so one huge body does not
// pin its buffer in the pool.
const maxPooled = 1 << 20

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// getScratch returns an empty buffer with room for at least n bytes.
func getScratch(n int) *[]byte {
	b := scratchPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, 0, n)
	}
	*b = (*b)[:0]
	return b
}

// putScratch returns buf (the buffer from getScratch, possibly grown by
// appends since) to the pool. The caller must not use buf afterwards.
func putScratch(b *[]byte, buf []byte) {
	if cap(buf) > maxPooled {
		return
	}
	*b = buf[:0]
	scratchPool.Put(b)
}
