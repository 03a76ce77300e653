package extproc

import "sync"

// Request bodies and the prompts parsed from them live in pooled buffers: a fresh 200 KB buffer per request costs
// more in page faults and zeroing than parsing it. Buffers over maxPooledBody are left to the GC so the pool stays
// bounded. Both kinds share one pool: a prompt is about as long as its body.
const maxPooledBody = 1 << 20

var bufPool sync.Pool // of *[]byte

// poisonByte is what released buffers are filled with under -tags kvpickpoison.
const poisonByte = 0xDB

// getBody returns an empty buffer with capacity for at least n bytes.
func getBody(n int64) []byte {
	if bp, ok := bufPool.Get().(*[]byte); ok && int64(cap(*bp)) >= n {
		return (*bp)[:0]
	}
	return make([]byte, 0, max(n, 4096))
}

// getPrompt returns a buffer for request.ParseInto to render the prompt in (it grows it as needed).
func getPrompt() *[]byte {
	if bp, ok := bufPool.Get().(*[]byte); ok {
		return bp
	}
	return new([]byte)
}

// putBody returns b to the pool. The caller must hold no other reference: Request.Raw aliases the body, so this
// runs only when the stream (and its Decision) has ended.
func putBody(b []byte) { putBuf(&b) }

// putPrompt returns a prompt buffer (nil is ignored) on the same terms as putBody: Request.Prompt aliases it.
func putPrompt(bp *[]byte) {
	if bp != nil {
		putBuf(bp)
	}
}

func putBuf(bp *[]byte) {
	if cap(*bp) == 0 || cap(*bp) > maxPooledBody {
		return
	}
	poison(*bp) // a no-op unless built with -tags kvpickpoison
	*bp = (*bp)[:0]
	bufPool.Put(bp)
}
