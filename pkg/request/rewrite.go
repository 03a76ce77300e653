package request

import (
	"encoding/json"
	"fmt"
)

// WithModel returns a copy of r.Raw whose model is model, the rest of the
// body byte for byte, and sets r.Model. r must come from Parse (ModelSpan set);
// r.Raw is left untouched.
func WithModel(r *Request, model string) ([]byte, error) {
	lo, hi := r.ModelSpan[0], r.ModelSpan[1]
	if hi <= lo || hi > len(r.Raw) || r.Raw[lo] != '"' {
		return nil, fmt.Errorf("request: rewrite model: no model in the body")
	}
	q, err := json.Marshal(model)
	if err != nil {
		return nil, fmt.Errorf("request: rewrite model: %w", err)
	}
	out := make([]byte, 0, len(r.Raw)-(hi-lo)+len(q))
	out = append(append(append(out, r.Raw[:lo]...), q...), r.Raw[hi:]...)
	r.Model = model
	return out, nil
}
