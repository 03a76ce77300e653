package request

import (
	"fmt"
	"math/bits"
)

// maxDepth matches encoding/json's nesting limit, so both accept the same
// documents.
const maxDepth = 10000

// syntaxError is malformed JSON at a byte offset. It aborts parsing; every
// other error a value reader returns is a semantic one, after which the
// scanner stands just past the offending value.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.off, e.msg)
}

func isSyntax(err error) bool {
	_, ok := err.(*syntaxError)
	return ok
}

// scanner is a single-pass JSON reader over b. It validates everything it
// passes over, including values it skips, with encoding/json's grammar.
// Gain: BenchmarkParse220KB against BenchmarkEncodingJSON220KB (bench_test.go).
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(msg string) error { return &syntaxError{off: s.i, msg: msg} }

func (s *scanner) failAt(i int, msg string) error { return &syntaxError{off: i, msg: msg} }

// ws skips JSON whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// eofOr returns the syntax error for an unexpected byte or the end of input.
func (s *scanner) eofOr(msg string) error {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	return s.fail(fmt.Sprintf("%s, found %q", msg, s.b[s.i]))
}

// skipValue validates and skips the value at s.i; depth counts the
// containers around it.
func (s *scanner) skipValue(depth int) error {
	switch c := s.peek(); {
	case c == '"':
		return s.skipString()
	case c == '{', c == '[':
		if depth >= maxDepth {
			return s.fail("exceeded max nesting depth")
		}
		if c == '{' {
			return s.skipObject(depth + 1)
		}
		return s.skipArray(depth + 1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, err := s.number()
		return err
	}
	return s.eofOr("expected a value")
}

func (s *scanner) skipObject(depth int) error {
	return s.object(func([]byte) error { return s.skipValue(depth) })
}

func (s *scanner) skipArray(depth int) error {
	return s.array(func(int) error { return s.skipValue(depth) })
}

// literal consumes true, false or null.
func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		for k := 0; k < len(lit) && s.i < len(s.b) && s.b[s.i] == lit[k]; k++ {
			s.i++
		}
		return s.eofOr("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// object iterates an object at s.i, calling fn with each decoded key and the
// scanner at its value; fn must consume the value. Semantic errors from fn are
// kept (the first is returned) while the rest of the object is still
// validated; a syntax error aborts.
func (s *scanner) object(fn func(key []byte) error) error {
	if s.peek() != '{' {
		return s.eofOr("expected '{'")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	var first error
	for {
		if s.peek() != '"' {
			return s.eofOr("expected string key")
		}
		key, err := s.smallString(nil) // allocates only for escaped keys
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.eofOr("expected ':' after object key")
		}
		s.i++
		if err := fn(key); err != nil {
			if isSyntax(err) {
				return err
			}
			first = keepFirst(first, err)
		}
		if done, err := s.next('}'); done || err != nil {
			return firstSyntax(err, first)
		}
	}
}

// array iterates an array at s.i like object, passing the element index.
func (s *scanner) array(fn func(idx int) error) error {
	if s.peek() != '[' {
		return s.eofOr("expected '['")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	var first error
	for idx := 0; ; idx++ {
		if err := fn(idx); err != nil {
			if isSyntax(err) {
				return err
			}
			first = keepFirst(first, err)
		}
		if done, err := s.next(']'); done || err != nil {
			return firstSyntax(err, first)
		}
	}
}

// next consumes ',' (more to come) or the closing byte (done).
func (s *scanner) next(closing byte) (done bool, err error) {
	switch s.peek() {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return true, s.eofOr(fmt.Sprintf("expected ',' or '%c'", closing))
}

func keepFirst(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func firstSyntax(syntax, first error) error {
	if syntax != nil {
		return syntax
	}
	return first
}

// number validates a JSON number at s.i and returns its bytes.
func (s *scanner) number() ([]byte, error) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil, s.eofOr("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, s.eofOr("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.eofOr("invalid number")
		}
	}
	return s.b[start:s.i], nil
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// parseUint reads an unsigned decimal integer without sign, fraction or
// exponent that is at most max.
func parseUint(num []byte, max uint64) (uint64, bool) {
	if len(num) == 0 || len(num) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false
		}
		hi, lo := bits.Mul64(v, 10)
		lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
		v = lo
	}
	return v, v <= max
}
