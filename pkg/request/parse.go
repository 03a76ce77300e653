package request

import (
	"errors"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// Top-level fields whose last occurrence wins (as in encoding/json and
// Python's json), each with its own error slot.
const (
	fModel = iota
	fPrompt
	fInstructions
	fStream
	fStreamOptions
	fMaxCompletionTokens
	fMaxTokens
	fMaxOutputTokens
	fCacheSalt
	fUser
	nFields
)

// parser holds the state of one Parse call.
type parser struct {
	s       scanner
	req     *Request
	buf     []byte  // the Prompt being rendered
	scratch *[]byte // buf's pool entry (or the caller's, when borrowed), nil until growBuf
	borrow  bool    // scratch is the caller's (ParseInto): Prompt aliases it, nothing goes to the pool
	instr   []byte  // responses instructions, rendered as a system message
	errs    [nFields]error
	seen    [nFields]bool
	maxTok  [3]int // max_completion_tokens, max_tokens, max_output_tokens
}

// Parse parses body for kind. Errors are *apierr.Error 400 naming the cause:
// malformed JSON (with byte offset), missing/empty/non-string model, chat
// without messages (or an empty list), missing prompt/input, wrong field
// types. The returned Request's Raw aliases body; Prompt and the other strings
// do not. KindModels bodies are not parsed. Safe for concurrent use.
//
// The body is read in one pass that validates all of it (encoding/json's
// grammar and nesting limit) and decodes only the routing fields; unknown
// fields are skipped. Duplicate keys: the last one wins.
func Parse(kind Kind, body []byte) (*Request, error) {
	switch kind {
	case KindModels:
		return &Request{Kind: kind, Raw: body}, nil
	case KindCompletions, KindChatCompletions, KindResponses, KindEmbeddings:
	default:
		return nil, apierr.BadRequest("unsupported request kind %v", kind)
	}
	return parse(parser{s: scanner{b: body}, req: &Request{Kind: kind, Raw: body}})
}

// ParseInto is Parse with the prompt rendered into *scratch, which the caller
// owns and may pass empty: it is grown as needed and keeps its storage for
// reuse. The returned Request's Prompt aliases *scratch (no copy, no
// allocation), so it is valid only until the caller reuses or drops scratch.
// For a hot path that pools its buffers, such as the ext_proc stream.
func ParseInto(kind Kind, body []byte, scratch *[]byte) (*Request, error) {
	switch kind {
	case KindModels:
		return &Request{Kind: kind, Raw: body}, nil
	case KindCompletions, KindChatCompletions, KindResponses, KindEmbeddings:
	default:
		return nil, apierr.BadRequest("unsupported request kind %v", kind)
	}
	return parse(parser{s: scanner{b: body}, req: &Request{Kind: kind, Raw: body}, scratch: scratch, borrow: true})
}

func parse(p parser) (*Request, error) {
	err := p.parse()
	switch {
	case p.borrow:
		if p.buf != nil {
			*p.scratch = p.buf[:0] // grown storage stays with the caller; Prompt may point into it
		}
	case p.scratch != nil:
		putScratch(p.scratch, p.buf)
	}
	if err != nil {
		return nil, err
	}
	return p.req, nil
}

func (p *parser) parse() error {
	if p.s.peek() != '{' {
		if err := p.s.skipValue(0); err != nil {
			return badJSON(err)
		}
		if err := p.s.end(); err != nil {
			return badJSON(err)
		}
		return apierr.BadRequest("request body must be a JSON object")
	}
	if err := p.s.object(p.field); err != nil {
		return badJSON(err) // p.field reports only syntax errors
	}
	if err := p.s.end(); err != nil {
		return badJSON(err)
	}
	return p.finish()
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.b) {
		return s.fail("unexpected data after top-level value")
	}
	return nil
}

func badJSON(err error) error {
	return &apierr.Error{Status: 400, Type: apierr.TypeInvalidRequest, Message: err.Error()}
}

// field reads one top-level member. Semantic errors go to the field's slot;
// only syntax errors are returned.
func (p *parser) field(key []byte) error {
	f, err := p.promptField(key)
	if f == fSkip {
		f, err = p.optionField(key)
	}
	if f == fSkip || isSyntax(err) {
		return err
	}
	p.seen[f], p.errs[f] = true, err
	if errors.Is(err, errNull) {
		p.seen[f], p.errs[f] = false, nil
	}
	return nil
}

// fSkip marks a member that is not read (unknown, or not for this kind).
const fSkip = -1

// promptField reads the kind-specific members that make the prompt.
func (p *parser) promptField(key []byte) (int, error) {
	switch k := p.req.Kind; string(key) {
	case "prompt":
		if k == KindCompletions {
			return fPrompt, p.promptValue("prompt")
		}
	case "messages":
		if k == KindChatCompletions {
			return fPrompt, p.messages()
		}
	case "input":
		if k == KindResponses {
			return fPrompt, p.responsesInput()
		}
		if k == KindEmbeddings {
			return fPrompt, p.promptValue("input")
		}
	case "instructions":
		if k == KindResponses {
			return fInstructions, p.instructions()
		}
	}
	return fSkip, nil
}

// optionField reads the kind-independent members; others are skipped.
func (p *parser) optionField(key []byte) (int, error) {
	switch string(key) {
	case "model":
		return fModel, p.model()
	case "stream":
		return fStream, p.boolean("stream", &p.req.Stream, 1)
	case "stream_options":
		return fStreamOptions, p.streamOptions()
	case "max_completion_tokens":
		return fMaxCompletionTokens, p.count("max_completion_tokens", &p.maxTok[0])
	case "max_tokens":
		return fMaxTokens, p.count("max_tokens", &p.maxTok[1])
	case "max_output_tokens":
		return fMaxOutputTokens, p.count("max_output_tokens", &p.maxTok[2])
	case "cache_salt":
		return fCacheSalt, p.optString("cache_salt", &p.req.CacheSalt)
	case "user":
		return fUser, p.optString("user", &p.req.User)
	}
	return fSkip, p.s.skipValue(1)
}

// finish checks required fields and reports the first error in field order.
func (p *parser) finish() error {
	if !p.seen[fModel] && p.errs[fModel] == nil {
		return apierr.BadRequest("model is required")
	}
	if !p.seen[fPrompt] && p.errs[fPrompt] == nil {
		return apierr.BadRequest("%s is required", promptField(p.req.Kind))
	}
	for _, err := range p.errs {
		if err != nil {
			return err
		}
	}
	p.req.MaxTokens = firstNonZero(p.maxTok[:])
	p.req.Prompt = p.prompt()
	return nil
}

func promptField(k Kind) string {
	switch k {
	case KindCompletions:
		return "prompt"
	case KindChatCompletions:
		return "messages"
	}
	return "input"
}

func firstNonZero(v []int) int {
	for _, x := range v {
		if x != 0 {
			return x
		}
	}
	return 0
}

// prompt copies the rendered bytes into a slice of their own (buf is pooled
// scratch and is reused once Parse returns). A buffer too big to be pooled
// that the prompt mostly fills is handed over instead, so a huge prompt is
// not copied: nothing writes to it afterwards. ParseInto's prompt is the
// caller's scratch itself.
func (p *parser) prompt() []byte {
	if p.seen[fInstructions] {
		return append(append(make([]byte, 0, len(p.instr)+len(p.buf)), p.instr...), p.buf...)
	}
	if p.borrow {
		return p.buf
	}
	if b := p.buf; cap(b) > maxPooled && cap(b)-len(b) <= len(b)/4 {
		p.buf = nil
		return b
	}
	return append(make([]byte, 0, len(p.buf)), p.buf...)
}
