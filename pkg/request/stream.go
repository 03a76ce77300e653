package request

import "bytes"

// Bounds on what a StreamScanner keeps.
const (
	maxSSELine  = 1 << 20  // longer SSE lines are skipped
	maxJSONBody = 4 << 20  // longer non-streamed bodies are not parsed...
	maxTail     = 64 << 10 // ...but usage is looked for in their last 64 KiB
)

// Events is what a chunk (or the end of the stream) revealed.
type Events struct {
	// FirstToken: the first event carrying generated output (a non-empty
	// content/text/reasoning/tool-call delta, a responses output delta, or a
	// choice with a finish_reason). Reported once per stream.
	FirstToken bool
	// Done: the SSE "[DONE]" marker; for a non-streamed body, the end (Finish).
	Done bool
	// Usage from the last chunk in this call that carried it, nil if none.
	Usage *Usage
	// CompletionTokensSeen counts the content deltas in this call, for
	// progress (engines usually send one token per delta).
	CompletionTokensSeen int
	// CompletionTokensTotal is the running count of content deltas over the
	// stream so far (the sum of CompletionTokensSeen up to this call).
	CompletionTokensTotal int
}

// merge adds later events to e.
func (e *Events) merge(o Events) {
	e.FirstToken = e.FirstToken || o.FirstToken
	e.Done = e.Done || o.Done
	if o.Usage != nil {
		e.Usage = o.Usage
	}
	e.CompletionTokensSeen += o.CompletionTokensSeen
	e.CompletionTokensTotal = max(e.CompletionTokensTotal, o.CompletionTokensTotal)
}

// StreamScanner follows a response body fed in arbitrary chunks. For SSE
// (text/event-stream) it reports the first event that carries generated
// output, the [DONE] marker, and usage from any chunk that has it
// (prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens, or
// the responses API's input/output names). For a non-streamed JSON body it
// parses usage at the end (Finish). It buffers at most one SSE line (1 MiB;
// longer lines are skipped) or a 4 MiB non-streamed body. Malformed events
// are ignored. Not safe for concurrent use: one per response stream.
//
// Each "data:" line is scanned on its own (servers put one JSON object per
// event); lines end with "\n", "\r\n" or "\r".
type StreamScanner struct {
	sse        bool
	line       []byte // the partial line carried over from earlier chunks
	skipping   bool   // the current line outgrew maxSSELine
	afterCR    bool   // the last chunk ended with '\r'; a leading '\n' is part of it
	firstToken bool   // FirstToken already reported
	total      int    // content deltas so far
	body       []byte // non-streamed body, or its tail after overflow
	overflow   bool   // the non-streamed body outgrew maxJSONBody
}

// NewStreamScanner returns a scanner for an SSE (sse) or plain JSON body.
func NewStreamScanner(sse bool) *StreamScanner {
	return &StreamScanner{sse: sse}
}

// Feed consumes a chunk; returns what happened in it. The chunk is not
// retained beyond what the bounds above allow (copied, never aliased).
func (s *StreamScanner) Feed(chunk []byte) Events {
	if !s.sse {
		s.bufferBody(chunk)
		return Events{}
	}
	var ev Events
	for len(chunk) > 0 {
		if s.afterCR {
			s.afterCR = false
			if chunk[0] == '\n' {
				chunk = chunk[1:]
				continue
			}
		}
		k := lineEnd(chunk)
		if k < 0 {
			s.carry(chunk)
			break
		}
		line, rest := chunk[:k], chunk[k+1:]
		if chunk[k] == '\r' {
			if len(rest) == 0 {
				s.afterCR = true
			} else if rest[0] == '\n' {
				rest = rest[1:]
			}
		}
		s.endLine(line, &ev)
		chunk = rest
	}
	s.total += ev.CompletionTokensSeen
	ev.CompletionTokensTotal = s.total
	return ev
}

// Finish is called at end of stream: an unterminated last SSE line is
// scanned; a non-streamed body (if within 4 MiB) is parsed for usage.
func (s *StreamScanner) Finish() Events {
	var ev Events
	if s.sse {
		if len(s.line) > 0 && !s.skipping {
			s.scanLine(s.line, &ev)
		}
		s.line, s.skipping = nil, false
	} else {
		ev = s.finishBody()
	}
	s.total += ev.CompletionTokensSeen
	ev.CompletionTokensTotal = s.total
	return ev
}

// finishBody parses the buffered non-streamed body; past 4 MiB only usage
// is looked for, in the kept tail.
func (s *StreamScanner) finishBody() Events {
	ev := Events{Done: true}
	if s.overflow {
		ev.Usage = tailUsage(s.body)
	} else if found, ok := scanPayload(s.body); ok {
		s.reportFirst(&found)
		ev.merge(found)
	}
	s.body = nil
	return ev
}

func (s *StreamScanner) bufferBody(chunk []byte) {
	if !s.overflow && len(s.body)+len(chunk) > maxJSONBody {
		s.overflow = true // from here on keep only a tail, in a small buffer
		s.body = append(make([]byte, 0, maxTail), s.body[max(0, len(s.body)-maxTail):]...)
	}
	if s.overflow {
		s.body = keepTail(s.body, chunk)
		return
	}
	if need := len(s.body) + len(chunk); need > cap(s.body) { // grow, but not past the bound
		grown := make([]byte, len(s.body), min(max(2*cap(s.body), need), maxJSONBody))
		s.body = grown[:copy(grown, s.body)]
	}
	s.body = append(s.body, chunk...)
}

// keepTail returns the last maxTail bytes of buf+chunk, reusing buf.
func keepTail(buf, chunk []byte) []byte {
	if len(chunk) >= maxTail {
		return append(buf[:0], chunk[len(chunk)-maxTail:]...)
	}
	keep := min(len(buf), maxTail-len(chunk))
	n := copy(buf, buf[len(buf)-keep:])
	return append(buf[:n], chunk...)
}

// lineEnd returns the index of the first '\n' or '\r', -1 if none.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	limit := b
	if n >= 0 {
		limit = b[:n]
	}
	if r := bytes.IndexByte(limit, '\r'); r >= 0 {
		return r
	}
	return n
}

// carry keeps an unterminated line piece for the next chunk.
func (s *StreamScanner) carry(piece []byte) {
	if s.skipping {
		return
	}
	if len(s.line)+len(piece) > maxSSELine {
		s.skipping, s.line = true, s.line[:0]
		return
	}
	s.line = append(s.line, piece...)
}

// endLine completes a line (joining any carried piece) and scans it.
func (s *StreamScanner) endLine(tail []byte, ev *Events) {
	if s.skipping {
		s.skipping = false
		return
	}
	line := tail
	if len(s.line) > 0 {
		if len(s.line)+len(tail) > maxSSELine {
			s.line = s.line[:0]
			return
		}
		s.line = append(s.line, tail...)
		line = s.line
		s.line = s.line[:0]
	}
	s.scanLine(line, ev)
}

// scanLine handles one SSE line: only "data:" lines matter.
func (s *StreamScanner) scanLine(line []byte, ev *Events) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return // event:, id:, retry:, comments and blank lines
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		ev.Done = true
		return
	}
	if found, ok := scanPayload(data); ok {
		s.reportFirst(&found)
		ev.merge(found)
	}
}

// reportFirst keeps FirstToken to the first event of the stream: found is
// one event's findings.
func (s *StreamScanner) reportFirst(found *Events) {
	found.FirstToken = found.FirstToken && !s.firstToken
	s.firstToken = s.firstToken || found.FirstToken
}
