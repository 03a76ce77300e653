package kvevents

// entry is one published batch as it went on the wire.
type entry struct {
	seq     uint64
	payload []byte
}

// ring keeps the last cap batches for replay. Not safe for concurrent use;
// the Publisher guards it.
type ring struct {
	buf   []entry
	start int // index of the oldest entry
	n     int
}

func newRing(capacity int) *ring {
	return &ring{buf: make([]entry, capacity)}
}

func (r *ring) push(e entry) {
	if len(r.buf) == 0 {
		return
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = e
		r.n++
		return
	}
	r.buf[r.start] = e
	r.start = (r.start + 1) % len(r.buf)
}

// since copies out the entries with seq >= from, oldest first.
func (r *ring) since(from uint64) []entry {
	var out []entry
	for i := 0; i < r.n; i++ {
		e := r.buf[(r.start+i)%len(r.buf)]
		if e.seq >= from {
			out = append(out, e)
		}
	}
	return out
}
