package strictyaml

import (
	"fmt"
	"strings"
)

// FieldError is one problem at one place in the document.
type FieldError struct {
	Line int    // 1-based line in the document, 0 when unknown
	Path string // field path, e.g. router.kvCost.overlapWeight or endpoints[1].port
	Msg  string
}

// Error reads `router.kvCost.overlapWeight: want a number, got "high" (line 7)`.
func (e *FieldError) Error() string {
	path := e.Path
	if path == "" {
		path = "(document)"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d)", path, e.Msg, e.Line)
	}
	return path + ": " + e.Msg
}

// List is every problem found in one document, in document order.
type List []*FieldError

// Error puts one problem on each line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each FieldError.
func (l List) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}
