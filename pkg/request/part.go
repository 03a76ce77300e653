package request

import "github.com/kvpick/kvpick/pkg/apierr"

// partState tracks one content part object. Its text is rendered as soon as
// it is read and dropped at the end if the part's type turns out not to be
// text; a duplicate "text" key is rendered again from its position.
type partState struct {
	mark     int
	textPos  int
	isText   bool
	textSeen bool
	written  bool
	textErr  error
}

// isTextType reports whether a content part type carries prompt text.
func isTextType(t []byte) bool {
	switch string(t) {
	case "text", "input_text", "output_text":
		return true
	}
	return false
}

// part reads one content part at l.
func (p *parser) part(l loc) error {
	if p.s.peek() != '{' {
		return p.typeErr(4, "%v must be a content part object", l)
	}
	ps := partState{mark: len(p.buf), textPos: -1}
	err := p.s.object(func(key []byte) error {
		switch string(key) {
		case "type":
			return p.partType(&ps)
		case "text":
			return p.partText(&ps, l)
		}
		return p.s.skipValue(5)
	})
	if err != nil {
		return err
	}
	return p.partFinish(&ps, l)
}

func (p *parser) partType(ps *partState) error {
	ps.isText = false
	if p.s.peek() != '"' {
		return p.s.skipValue(5)
	}
	var scratch [16]byte
	t, err := p.s.smallString(scratch[:0])
	ps.isText = isTextType(t)
	return err
}

func (p *parser) partText(ps *partState, l loc) error {
	first := !ps.textSeen
	if ps.written {
		p.buf, ps.written = p.buf[:ps.mark], false
	}
	p.s.ws()
	ps.textSeen, ps.textPos, ps.textErr = true, p.s.i, nil
	if !first {
		return p.s.skipValue(5)
	}
	ps.textErr, ps.written = p.text(l), true
	return syntaxOnly(ps.textErr)
}

func (p *parser) partFinish(ps *partState, l loc) error {
	switch {
	case !ps.isText:
		p.buf = p.buf[:ps.mark]
		return nil
	case ps.written:
		return ps.textErr
	case ps.textPos < 0:
		return nil
	}
	return p.at(ps.textPos, func() error { return p.text(l) })
}

// text renders a text part's text followed by "\n".
func (p *parser) text(l loc) error {
	if p.s.peek() != '"' {
		return p.typeErr(5, "%v.text must be a string", l)
	}
	var err error
	p.buf, err = p.s.appendString(p.buf)
	p.buf = append(p.buf, '\n')
	return err
}

func (p *parser) badRequest(format string, args ...any) error {
	return apierr.BadRequest(format, args...)
}
