package request

import (
	"bytes"
	"math"
)

// payloadWalker pulls output and usage out of one response JSON object (an
// SSE event or a whole non-streamed body), skipping everything else.
type payloadWalker struct {
	s  scanner
	ev Events
}

// scanPayload scans one JSON object; ok is false if it is malformed.
func scanPayload(data []byte) (Events, bool) {
	w := payloadWalker{s: scanner{b: data}}
	if err := w.s.object(w.top); err != nil || w.s.end() != nil {
		return Events{}, false
	}
	return w.ev, true
}

func (w *payloadWalker) top(key []byte) error {
	switch string(key) {
	case "choices":
		return w.choices()
	case "usage":
		return w.usage()
	case "delta": // responses API: {"type":"response.output_text.delta","delta":"..."}
		return w.output(w.nonEmptyString())
	case "response": // responses API: response.completed carries the usage
		return w.nested("usage", w.usage)
	}
	return w.s.skipValue(1)
}

// output counts one content delta if found says so.
func (w *payloadWalker) output(found bool, err error) error {
	if found {
		w.ev.FirstToken = true
		w.ev.CompletionTokensSeen++
	}
	return err
}

// nested walks an object (anything else is skipped), handing key to read.
func (w *payloadWalker) nested(key string, read func() error) error {
	if w.s.peek() != '{' {
		return w.s.skipValue(2)
	}
	return w.s.object(func(k []byte) error {
		if string(k) == key {
			return read()
		}
		return w.s.skipValue(3)
	})
}

func (w *payloadWalker) choices() error {
	if w.s.peek() != '[' {
		return w.s.skipValue(1)
	}
	return w.s.array(func(int) error {
		if w.s.peek() != '{' {
			return w.s.skipValue(2)
		}
		var out bool
		err := w.s.object(func(k []byte) error { return w.choiceField(k, &out) })
		return w.output(out, err)
	})
}

// choiceField reads one member of a choice, setting out if it carries output.
func (w *payloadWalker) choiceField(key []byte, out *bool) error {
	var found bool
	var err error
	switch string(key) {
	case "delta", "message":
		if w.s.peek() != '{' {
			return w.s.skipValue(3)
		}
		err = w.s.object(func(k []byte) error {
			f, err := w.messageField(k)
			found = found || f
			return err
		})
	case "text":
		found, err = w.nonEmptyString()
	case "finish_reason":
		if w.s.peek() == 'n' {
			return w.s.literal("null")
		}
		w.ev.FirstToken = true
		return w.s.skipValue(3)
	default:
		return w.s.skipValue(3)
	}
	*out = *out || found
	return err
}

// messageField reports whether a delta/message member carries output.
func (w *payloadWalker) messageField(key []byte) (bool, error) {
	switch string(key) {
	case "content", "reasoning_content", "reasoning":
		return w.nonEmptyString()
	case "tool_calls":
		if w.s.peek() != '[' {
			return false, w.s.skipValue(4)
		}
		start := w.s.i
		err := w.s.skipValue(4)
		return w.s.i-start > 2 && err == nil && hasElement(w.s.b[start:w.s.i]), err
	}
	return false, w.s.skipValue(4)
}

// hasElement reports whether a validated JSON array is non-empty.
func hasElement(arr []byte) bool {
	s := scanner{b: arr, i: 1}
	return s.peek() != ']'
}

// nonEmptyString reports whether the value is a string other than "".
func (w *payloadWalker) nonEmptyString() (bool, error) {
	if w.s.peek() != '"' {
		return false, w.s.skipValue(3)
	}
	nonEmpty := w.s.i+1 < len(w.s.b) && w.s.b[w.s.i+1] != '"'
	return nonEmpty, w.s.skipString()
}

// usage reads a usage object in either API's names.
func (w *payloadWalker) usage() error {
	if w.s.peek() != '{' {
		return w.s.skipValue(2)
	}
	u := &Usage{}
	err := w.s.object(func(k []byte) error {
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			return w.count(&u.PromptTokens)
		case "completion_tokens", "output_tokens":
			return w.count(&u.CompletionTokens)
		case "prompt_tokens_details", "input_tokens_details":
			return w.nested("cached_tokens", func() error { return w.count(&u.CachedTokens) })
		}
		return w.s.skipValue(3)
	})
	if err == nil {
		w.ev.Usage = u
	}
	return err
}

// count reads a non-negative integer; anything else leaves dst at 0.
func (w *payloadWalker) count(dst *int) error {
	*dst = 0
	if c := w.s.peek(); c != '-' && (c < '0' || c > '9') {
		return w.s.skipValue(3)
	}
	num, err := w.s.number()
	if v, ok := parseUint(num, math.MaxInt32); ok {
		*dst = int(v)
	}
	return err
}

// tailUsage finds the last "usage" object in the tail of an over-long JSON
// body (engines put usage at the end), nil if there is none.
func tailUsage(tail []byte) *Usage {
	i := bytes.LastIndex(tail, []byte(`"usage"`))
	if i < 0 {
		return nil
	}
	w := payloadWalker{s: scanner{b: tail, i: i + len(`"usage"`)}}
	if w.s.peek() != ':' {
		return nil
	}
	w.s.i++
	if w.usage() != nil {
		return nil
	}
	return w.ev.Usage
}
