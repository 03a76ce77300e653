package request

import (
	"errors"
	"math"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// errNull marks an optional field that was null: treated as absent.
var errNull = errors.New("null")

// typeErr skips the value at hand and returns a semantic error naming it.
func (p *parser) typeErr(depth int, format string, args ...any) error {
	if err := p.s.skipValue(depth); err != nil {
		return err
	}
	return apierr.BadRequest(format, args...)
}

func (p *parser) model() error {
	if p.s.peek() != '"' {
		return p.typeErr(1, "model must be a non-empty string")
	}
	start := p.s.i
	v, err := p.s.smallString(nil)
	if err != nil {
		return err
	}
	if len(v) == 0 {
		return apierr.BadRequest("model must be a non-empty string")
	}
	p.req.Model = string(v)
	p.req.ModelSpan = [2]int{start, p.s.i}
	return nil
}

func (p *parser) optString(name string, dst *string) error {
	*dst = ""
	switch p.s.peek() {
	case 'n':
		return p.null()
	case '"':
		v, err := p.s.smallString(nil)
		*dst = string(v)
		return err
	}
	return p.typeErr(1, "%s must be a string", name)
}

// null consumes null and reports errNull (unless malformed).
func (p *parser) null() error {
	if err := p.s.literal("null"); err != nil {
		return err
	}
	return errNull
}

func (p *parser) boolean(name string, dst *bool, depth int) error {
	*dst = false
	switch p.s.peek() {
	case 'n':
		return p.null()
	case 't':
		*dst = true
		return p.s.literal("true")
	case 'f':
		return p.s.literal("false")
	}
	return p.typeErr(depth, "%s must be a boolean", name)
}

func (p *parser) count(name string, dst *int) error {
	*dst = 0
	switch c := p.s.peek(); {
	case c == 'n':
		return p.null()
	case c == '-' || c >= '0' && c <= '9':
		num, err := p.s.number()
		if err != nil {
			return err
		}
		v, ok := parseUint(num, math.MaxInt32)
		if !ok {
			return apierr.BadRequest("%s must be an integer in [0, %d], got %s", name, math.MaxInt32, num)
		}
		*dst = int(v)
		return nil
	}
	return p.typeErr(1, "%s must be an integer", name)
}

func (p *parser) streamOptions() error {
	p.req.IncludeUsage = false
	switch p.s.peek() {
	case 'n':
		return p.null()
	case '{':
		var slot error
		err := p.s.object(func(key []byte) error {
			if string(key) != "include_usage" {
				return p.s.skipValue(2)
			}
			slot = p.boolean("stream_options.include_usage", &p.req.IncludeUsage, 2)
			if isSyntax(slot) {
				return slot
			}
			return nil
		})
		if err != nil || errors.Is(slot, errNull) {
			return err
		}
		return slot
	}
	return p.typeErr(1, "stream_options must be an object")
}
