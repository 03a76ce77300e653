package request

import (
	"fmt"
	"math"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// Prompt rendering (what Request.Prompt holds):
//
//   - completions prompt / embeddings input: a string as is; a list of
//     strings joined with "\n"; token ids go to PromptTokenIDs instead
//     (a list of lists is concatenated) and Prompt stays empty.
//   - chat messages and responses message items: for each message
//     "<|" + role + "|>\n", then each text part followed by "\n" (a string
//     content is one text part; null or missing content adds nothing).
//     Text parts are those whose type is "text", "input_text" or
//     "output_text"; other parts (images, audio, files) are skipped.
//   - responses: instructions, if present, come first as a "system" message;
//     a string input is one "user" message; input items without a role
//     (function calls and their outputs, reasoning) are skipped.

// loc names a place in the body for error messages, formatted only on error.
type loc struct {
	field     string
	msg, part int // -1 when absent
}

func (l loc) String() string {
	s := l.field
	if l.msg >= 0 {
		s += fmt.Sprintf("[%d]", l.msg)
	}
	if l.part >= 0 {
		s += fmt.Sprintf(".content[%d]", l.part)
	}
	return s
}

// growBuf gives the prompt buffer room for the whole body (the rendered
// prompt is rarely longer than its JSON) and empties it. The buffer is
// pooled scratch; see scratch.go.
func (p *parser) growBuf() {
	if p.buf == nil {
		switch {
		case p.scratch == nil:
			p.scratch = getScratch(len(p.s.b))
		case cap(*p.scratch) < len(p.s.b):
			*p.scratch = make([]byte, 0, len(p.s.b))
		}
		p.buf = *p.scratch
	}
	p.buf = p.buf[:0]
}

const promptShapes = "a string, a list of strings, a list of token ids or a list of token id lists"

// promptValue reads a completions prompt or embeddings input.
func (p *parser) promptValue(name string) error {
	p.buf = p.buf[:0]
	p.req.PromptTokenIDs = p.req.PromptTokenIDs[:0]
	var err error
	switch p.s.peek() {
	case '"':
		p.growBuf()
		p.buf, err = p.s.appendString(p.buf)
		return err
	case '[':
		return p.promptList(name)
	case 'n':
		return p.null()
	}
	return p.typeErr(1, "%s must be %s", name, promptShapes)
}

// Shapes of a prompt list, decided by its first element.
const (
	shapeNone = iota
	shapeStrings
	shapeIDs
	shapeIDLists
)

func shapeOf(c byte) int {
	switch {
	case c == '"':
		return shapeStrings
	case c == '-' || c >= '0' && c <= '9':
		return shapeIDs
	case c == '[':
		return shapeIDLists
	}
	return shapeNone
}

// firstShape peeks at the shape of the first element of the list at s.i.
func (p *parser) firstShape() int {
	save := p.s.i
	p.s.i++
	c := p.s.peek()
	p.s.i = save
	return shapeOf(c)
}

func (p *parser) promptList(name string) error {
	shape := p.firstShape()
	switch shape {
	case shapeIDs:
		_, err := p.idList(name, 2)
		return err
	case shapeStrings:
		p.growBuf()
	}
	n := 0
	err := p.s.array(func(idx int) error {
		n++
		if shapeOf(p.s.peek()) != shape || shape == shapeNone {
			return p.typeErr(2, "%s must be %s", name, promptShapes)
		}
		if shape == shapeIDLists {
			_, err := p.idList(name, 3)
			return err
		}
		return p.promptString(idx)
	})
	if err == nil && n == 0 {
		return apierr.BadRequest("%s must not be an empty list", name)
	}
	return err
}

// promptString appends one string of a list of prompts.
func (p *parser) promptString(idx int) error {
	if idx > 0 {
		p.buf = append(p.buf, '\n')
	}
	var err error
	p.buf, err = p.s.appendString(p.buf)
	return err
}

// idList reads a list of token ids at s.i (depth: containers around its
// elements) onto PromptTokenIDs, with a fast path for plain integers.
func (p *parser) idList(name string, depth int) (int, error) {
	if p.req.PromptTokenIDs == nil {
		p.req.PromptTokenIDs = make([]uint32, 0, (len(p.s.b)-p.s.i)/4)
	}
	p.s.i++ // '['
	if p.s.peek() == ']' {
		p.s.i++
		return 0, nil
	}
	var first error
	for n := 1; ; n++ {
		if err := p.tokenIDFast(name, depth); err != nil {
			if isSyntax(err) {
				return n, err
			}
			first = keepFirst(first, err)
		}
		if done, err := p.s.next(']'); done || err != nil {
			return n, firstSyntax(err, first)
		}
	}
}

// tokenIDFast appends a plain integer id of up to 10 digits; anything else
// goes the general way, which validates and names the error.
func (p *parser) tokenIDFast(name string, depth int) error {
	p.s.ws()
	b, start := p.s.b, p.s.i
	i, end := start, min(len(b), start+10)
	var v uint64
	for ; i < end && b[i]-'0' <= 9; i++ {
		v = v*10 + uint64(b[i]-'0')
	}
	if n := i - start; n > 0 && v <= math.MaxUint32 && (n == 1 || b[start] != '0') && !numberGoesOn(b, i) {
		p.s.i = i
		p.req.PromptTokenIDs = append(p.req.PromptTokenIDs, uint32(v))
		return nil
	}
	if shapeOf(p.s.peek()) != shapeIDs {
		return p.typeErr(depth, "%s must be %s", name, promptShapes)
	}
	return p.tokenID(name)
}

// numberGoesOn reports whether b[i] continues a number (digit, fraction or
// exponent).
func numberGoesOn(b []byte, i int) bool {
	if i >= len(b) {
		return false
	}
	c := b[i]
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E'
}

func (p *parser) tokenID(name string) error {
	num, err := p.s.number()
	if err != nil {
		return err
	}
	v, ok := parseUint(num, math.MaxUint32)
	if !ok {
		return apierr.BadRequest("%s token ids must be integers in [0, %d], got %s", name, uint32(math.MaxUint32), num)
	}
	p.req.PromptTokenIDs = append(p.req.PromptTokenIDs, uint32(v))
	return nil
}

// messages reads chat messages: a non-empty list of message objects.
func (p *parser) messages() error {
	p.growBuf()
	switch p.s.peek() {
	case 'n':
		return p.null()
	case '[':
		n := 0
		err := p.s.array(func(idx int) error {
			n++
			return p.message(loc{field: "messages", msg: idx, part: -1}, true)
		})
		if err == nil && n == 0 {
			return apierr.BadRequest("messages must not be empty")
		}
		return err
	}
	return p.typeErr(1, "messages must be a list of message objects")
}

// responsesInput reads responses input: a string or a list of items.
func (p *parser) responsesInput() error {
	p.growBuf()
	var err error
	switch p.s.peek() {
	case 'n':
		return p.null()
	case '"':
		p.buf = append(p.buf, "<|user|>\n"...)
		p.buf, err = p.s.appendString(p.buf)
		p.buf = append(p.buf, '\n')
		return err
	case '[':
		return p.s.array(func(idx int) error {
			return p.message(loc{field: "input", msg: idx, part: -1}, false)
		})
	}
	return p.typeErr(1, "input must be a string or a list of input items")
}

// instructions reads the responses system instructions.
func (p *parser) instructions() error {
	p.instr = p.instr[:0]
	switch p.s.peek() {
	case 'n':
		return p.null()
	case '"':
		p.instr = append(p.instr, "<|system|>\n"...)
		var err error
		p.instr, err = p.s.appendString(p.instr)
		p.instr = append(p.instr, '\n')
		return err
	}
	return p.typeErr(1, "instructions must be a string")
}
