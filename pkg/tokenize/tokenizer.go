package tokenize

import (
	"context"
	"unsafe"
)

// Tokenizer turns prompt text into token ids for a model. Implementations are
// safe for concurrent use.
type Tokenizer interface {
	// Tokenize appends the tokens of text, as model would see them, to dst.
	// text is only read during the call and never kept (it may alias a
	// pooled buffer).
	Tokenize(ctx context.Context, model string, text []byte, dst []uint32) ([]uint32, error)
	// Exact reports whether the ids are the model's own (false for approximation).
	Exact() bool
	// Name identifies the tokenizer in logs and metrics ("approximate", "remote").
	Name() string
}

// Approximate is the Tokenizer backed by Approx. Safe for concurrent use; it
// never fails and ignores model.
type Approximate struct{}

// Tokenize appends Approx(text) to dst.
func (Approximate) Tokenize(_ context.Context, _ string, text []byte, dst []uint32) ([]uint32, error) {
	return Approx(dst, view(text)), nil
}

// view reads b as a string for the duration of a call that keeps no
// reference to it (Approx, Bytes): no copy of a prompt on the decision path.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Exact is false: the ids are not any real model's.
func (Approximate) Exact() bool { return false }

// Name is "approximate".
func (Approximate) Name() string { return "approximate" }
