//go:build kvpickpoison

package extproc

// poison overwrites b's whole capacity with poisonByte. Built only with
// -tags kvpickpoison (make test runs the stream tests so), so code that keeps
// a request's Raw or Prompt past Decision.Done reads garbage and fails its
// test loudly instead of passing by luck.
func poison(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = poisonByte
	}
}

// poisoned reports whether released buffers are poisoned (-tags kvpickpoison).
const poisoned = true
