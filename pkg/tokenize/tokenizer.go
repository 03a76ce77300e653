package tokenize

import "context"

// Tokenizer turns prompt text into token ids for a model. Implementations are
// safe for concurrent use.
type Tokenizer interface {
	// Tokenize appends the tokens of text, as model would see them, to dst.
	Tokenize(ctx context.Context, model, text string, dst []uint32) ([]uint32, error)
	// Exact reports whether the ids are the model's own (false for approximation).
	Exact() bool
	// Name identifies the tokenizer in logs and metrics ("approximate", "remote").
	Name() string
}

// Approximate is the Tokenizer backed by Approx. Safe for concurrent use; it
// never fails and ignores model.
type Approximate struct{}

// Tokenize appends Approx(text) to dst.
func (Approximate) Tokenize(_ context.Context, _, text string, dst []uint32) ([]uint32, error) {
	return Approx(dst, text), nil
}

// Exact is false: the ids are not any real model's.
func (Approximate) Exact() bool { return false }

// Name is "approximate".
func (Approximate) Name() string { return "approximate" }
