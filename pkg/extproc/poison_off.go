//go:build !kvpickpoison

package extproc

// poison is a no-op in normal builds; see poison_on.go.
func poison([]byte) {}

// poisoned reports whether released buffers are poisoned (-tags kvpickpoison).
const poisoned = false
