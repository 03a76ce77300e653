package extproc

import "sync"

// Request bodies are collected in pooled buffers: a fresh 200 KB buffer per request costs more in page faults and
// zeroing than parsing it. Buffers over maxPooledBody are left to the GC so the pool stays bounded.
const maxPooledBody = 1 << 20

var bodyPool sync.Pool // of *[]byte

// getBody returns an empty buffer with capacity for at least n bytes.
func getBody(n int64) []byte {
	if bp, ok := bodyPool.Get().(*[]byte); ok && int64(cap(*bp)) >= n {
		return (*bp)[:0]
	}
	return make([]byte, 0, max(n, 4096))
}

// putBody returns b to the pool. The caller must hold no other reference: Request.Raw aliases the body, so this
// runs only when the stream (and its Decision) has ended.
func putBody(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledBody {
		return
	}
	b = b[:0]
	bodyPool.Put(&b)
}

var promptPool = sync.Pool{New: func() any { return new([]byte) }}

// getPrompt returns a buffer for request.ParseInto to render the prompt in (it grows it as needed).
func getPrompt() *[]byte { return promptPool.Get().(*[]byte) }

// putPrompt returns a prompt buffer to the pool once nothing refers to the Prompt (as putBody).
func putPrompt(b *[]byte) {
	if b == nil || cap(*b) > maxPooledBody {
		return
	}
	*b = (*b)[:0]
	promptPool.Put(b)
}
