package request

import "slices"

// Messages are rendered straight into the prompt buffer in one pass. If
// "content" comes before "role", the content is rendered first and the role
// prefix is inserted in front of it at the end of the object (a memmove, not
// a second parse). On duplicate keys (the last wins) the message's output is
// dropped and rendered again at the end from the recorded value positions,
// which the first pass has already validated.

// msgState tracks one message object.
type msgState struct {
	mark                int // len(buf) when the message began
	rolePos, contentPos int // value offsets, -1 when absent
	contentSeen         bool
	written             bool // buf[mark:] holds the rendered content
	prefixed            bool // ... preceded by the role prefix
	roleErr, contentErr error
}

// message reads one chat message or responses input item at l. Items
// without a role are skipped unless requireRole.
func (p *parser) message(l loc, requireRole bool) error {
	if p.s.peek() != '{' {
		return p.typeErr(2, "%v must be a message object", l)
	}
	m := msgState{mark: len(p.buf), rolePos: -1, contentPos: -1}
	err := p.s.object(func(key []byte) error {
		switch string(key) {
		case "role":
			return p.msgRole(&m, l)
		case "content":
			return p.msgContent(&m, l)
		}
		return p.s.skipValue(3)
	})
	if err != nil {
		return err
	}
	return p.msgFinish(&m, l, requireRole)
}

// unwrite drops what the message rendered so far.
func (p *parser) unwrite(m *msgState) {
	if m.written {
		p.buf, m.written = p.buf[:m.mark], false
	}
}

func (p *parser) msgRole(m *msgState, l loc) error {
	if m.prefixed {
		p.unwrite(m) // a second role: the prefix written is stale
	}
	m.rolePos, m.roleErr = -1, nil
	if p.s.peek() == '"' {
		m.rolePos = p.s.i
		return p.s.skipString()
	}
	m.roleErr = p.typeErr(3, "%v.role must be a string", l)
	return syntaxOnly(m.roleErr)
}

func (p *parser) msgContent(m *msgState, l loc) error {
	first := !m.contentSeen
	p.unwrite(m)
	p.s.ws()
	m.contentSeen, m.contentPos, m.contentErr = true, p.s.i, nil
	if !first {
		return p.s.skipValue(2)
	}
	m.prefixed = m.rolePos >= 0
	if m.prefixed {
		p.writeRole(m.rolePos)
	}
	m.contentErr = p.content(l)
	m.written = true
	return syntaxOnly(m.contentErr)
}

func (p *parser) msgFinish(m *msgState, l loc, requireRole bool) error {
	switch {
	case m.roleErr != nil:
		return m.roleErr
	case m.rolePos < 0 && requireRole:
		return p.badRequest("%v.role is required", l)
	case m.rolePos < 0:
		p.buf = p.buf[:m.mark]
		return nil
	case m.written && !m.prefixed:
		p.insertRole(m.mark, m.rolePos)
		fallthrough
	case m.written:
		return m.contentErr
	}
	p.writeRole(m.rolePos)
	if m.contentPos < 0 {
		return nil
	}
	return p.at(m.contentPos, func() error { return p.content(l) })
}

// syntaxOnly passes on syntax errors; semantic ones were kept by the caller.
func syntaxOnly(err error) error {
	if isSyntax(err) {
		return err
	}
	return nil
}

// at runs read with the scanner at pos, then puts it back.
func (p *parser) at(pos int, read func() error) error {
	saved := p.s.i
	p.s.i = pos
	err := read()
	p.s.i = saved
	return err
}

// role decodes the (validated) role string at pos.
func (p *parser) role(pos int, scratch []byte) []byte {
	var role []byte
	p.at(pos, func() error {
		var err error
		role, err = p.s.smallString(scratch)
		return err
	})
	return role
}

// writeRole renders "<|role|>\n" from the role string at pos.
func (p *parser) writeRole(pos int) {
	var scratch [32]byte
	p.buf = append(p.buf, "<|"...)
	p.buf = append(p.buf, p.role(pos, scratch[:0])...)
	p.buf = append(p.buf, "|>\n"...)
}

// insertRole puts the role prefix at buf[mark:], before content already
// rendered there.
func (p *parser) insertRole(mark, pos int) {
	var scratch [32]byte
	role := p.role(pos, scratch[:0])
	n, old := len(role)+5, len(p.buf)
	p.buf = slices.Grow(p.buf, n)[:old+n]
	copy(p.buf[mark+n:], p.buf[mark:old])
	copy(p.buf[mark:], "<|")
	copy(p.buf[mark+2:], role)
	copy(p.buf[mark+2+len(role):], "|>\n")
}

// content renders a message's content: a string, null or a list of parts.
func (p *parser) content(l loc) error {
	var err error
	switch p.s.peek() {
	case '"':
		p.buf, err = p.s.appendString(p.buf)
		p.buf = append(p.buf, '\n')
		return err
	case 'n':
		return p.s.literal("null")
	case '[':
		return p.s.array(func(j int) error {
			return p.part(loc{field: l.field, msg: l.msg, part: j})
		})
	}
	return p.typeErr(3, "%v.content must be a string, a list of content parts or null", l)
}
