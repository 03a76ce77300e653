package request

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// chatStream is a vLLM-style chat stream with include_usage.
const chatStream = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n" +
	"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n" +
	": keep-alive comment\n\n" +
	"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \\\"\\u00e9\\\"\"},\"finish_reason\":null}]}\r\n\r\n" +
	"event: message\ndata:{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\r" +
	"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14,\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n" +
	"data: [DONE]\n\n"

// feedAll feeds stream in the given pieces and sums the events.
func feedAll(s *StreamScanner, pieces ...[]byte) (Events, int) {
	var total Events
	firsts := 0
	for _, p := range pieces {
		ev := s.Feed(p)
		if ev.FirstToken {
			firsts++
		}
		total.merge(ev)
	}
	ev := s.Finish()
	if ev.FirstToken {
		firsts++
	}
	total.merge(ev)
	return total, firsts
}

func checkChatEvents(t *testing.T, what string, ev Events, firsts int) {
	t.Helper()
	want := Usage{PromptTokens: 12, CompletionTokens: 2, CachedTokens: 8}
	if !ev.FirstToken || firsts != 1 || !ev.Done || ev.Usage == nil || *ev.Usage != want || ev.CompletionTokensSeen != 2 {
		t.Fatalf("%s: events %+v (usage %+v), first-token reports %d", what, ev, ev.Usage, firsts)
	}
}

func TestStreamScannerSplitAtEveryByte(t *testing.T) {
	b := []byte(chatStream)
	ev, firsts := feedAll(NewStreamScanner(true), b)
	checkChatEvents(t, "whole", ev, firsts)
	for i := 0; i <= len(b); i++ {
		ev, firsts := feedAll(NewStreamScanner(true), b[:i], b[i:])
		checkChatEvents(t, fmt.Sprintf("split at %d", i), ev, firsts)
	}
	var bytewise [][]byte
	for i := range b {
		bytewise = append(bytewise, b[i:i+1])
	}
	ev, firsts = feedAll(NewStreamScanner(true), bytewise...)
	checkChatEvents(t, "byte by byte", ev, firsts)
}

func TestStreamScannerFirstTokenChunk(t *testing.T) {
	s := NewStreamScanner(true)
	lines := strings.SplitAfter(chatStream, "\n\n")
	if ev := s.Feed([]byte(lines[0])); ev.FirstToken || ev.Usage != nil {
		t.Errorf("role-only chunk: %+v", ev)
	}
	if ev := s.Feed([]byte(lines[1])); !ev.FirstToken || ev.CompletionTokensSeen != 1 {
		t.Errorf("first content chunk: %+v", ev)
	}
	if ev := s.Feed([]byte(lines[2] + lines[3])); ev.FirstToken || ev.CompletionTokensSeen != 1 {
		t.Errorf("second content chunk: %+v", ev)
	}
}

func TestStreamScannerShapes(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		first  bool
		seen   int
		usage  *Usage
		done   bool
	}{
		{"completions", "data: {\"choices\":[{\"text\":\"a\"},{\"text\":\"\"}]}\n\ndata: [DONE]\n\n", true, 1, nil, true},
		{"finish only", "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}\n", true, 0, nil, false},
		{"reasoning", "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\n", true, 1, nil, false},
		{"tool call", "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0}]}}]}\n", true, 1, nil, false},
		{"empty tool calls", "data: {\"choices\":[{\"delta\":{\"tool_calls\":[ ]}}]}\n", false, 0, nil, false},
		{"responses", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n" +
			"data: {\"type\":\"response.completed\",\"response\":{\"output\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1,\"input_tokens_details\":{\"cached_tokens\":3}}}}\n\n",
			true, 1, &Usage{PromptTokens: 5, CompletionTokens: 1, CachedTokens: 3}, false},
		{"continuous usage", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n" +
			"data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n",
			true, 2, &Usage{PromptTokens: 3, CompletionTokens: 2}, false},
		{"malformed event ignored", "data: {\"choices\":[{\"text\":\"a\"}\n", false, 0, nil, false},
		{"unterminated last line", "data: [DONE]", false, 0, nil, true},
	}
	for _, tc := range tests {
		ev, _ := feedAll(NewStreamScanner(true), []byte(tc.stream))
		if ev.FirstToken != tc.first || ev.CompletionTokensSeen != tc.seen || ev.Done != tc.done ||
			(ev.Usage == nil) != (tc.usage == nil) || ev.Usage != nil && *ev.Usage != *tc.usage {
			t.Errorf("%s: got %+v (usage %+v)", tc.name, ev, ev.Usage)
		}
	}
}

func TestStreamScannerLongLineSkipped(t *testing.T) {
	long := "data: {\"choices\":[{\"text\":\"" + strings.Repeat("x", maxSSELine) + "\"}]}\n"
	stream := long + "data: {\"usage\":{\"prompt_tokens\":4}}\n"
	for _, chunk := range []int{len(stream), 4096, 100_000} {
		s := NewStreamScanner(true)
		var pieces [][]byte
		for b := []byte(stream); len(b) > 0; {
			n := min(chunk, len(b))
			pieces, b = append(pieces, b[:n]), b[n:]
		}
		ev, _ := feedAll(s, pieces...)
		if ev.Usage == nil || ev.Usage.PromptTokens != 4 {
			t.Errorf("chunk %d: usage after a long line lost: %+v", chunk, ev)
		}
		if chunk != len(stream) && ev.FirstToken {
			t.Errorf("chunk %d: an over-long line (buffered) was scanned", chunk)
		}
		if cap(s.line) > maxSSELine {
			t.Errorf("chunk %d: buffered %d bytes", chunk, cap(s.line))
		}
	}
}

func TestStreamScannerJSONBody(t *testing.T) {
	body := []byte(`{"id":"x","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":7,"completion_tokens":1,"prompt_tokens_details":null}}`)
	for i := 0; i <= len(body); i += 7 {
		s := NewStreamScanner(false)
		if ev := s.Feed(body[:i]); ev != (Events{}) {
			t.Fatalf("Feed reported %+v before the end", ev)
		}
		s.Feed(body[i:])
		ev := s.Finish()
		if !ev.Done || !ev.FirstToken || ev.Usage == nil || *ev.Usage != (Usage{PromptTokens: 7, CompletionTokens: 1}) {
			t.Fatalf("split %d: %+v (usage %+v)", i, ev, ev.Usage)
		}
	}
	// Past 4 MiB only the usage at the end is found, whatever the chunking.
	big := append(append([]byte(`{"data":[`), bytes.Repeat([]byte(`[0.125,-1.5],`), maxJSONBody/12)...), `[1]],`...)
	big = append(big, `"usage":{"prompt_tokens":9,"total_tokens":9}}`...)
	for _, chunk := range []int{1000, 70_000, len(big)} {
		s := NewStreamScanner(false)
		for b := big; len(b) > 0; b = b[min(chunk, len(b)):] {
			s.Feed(b[:min(chunk, len(b))])
			if cap(s.body) > maxJSONBody+chunk {
				t.Fatalf("chunk %d: buffered %d bytes", chunk, cap(s.body))
			}
		}
		if ev := s.Finish(); !ev.Done || ev.Usage == nil || *ev.Usage != (Usage{PromptTokens: 9}) || s.body != nil {
			t.Errorf("chunk %d: oversized body: %+v", chunk, ev)
		}
	}
}

func TestStreamScannerTotal(t *testing.T) {
	s := NewStreamScanner(true)
	delta := "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n"
	for i := 1; i <= 3; i++ {
		if ev := s.Feed([]byte(strings.Repeat(delta, i))); ev.CompletionTokensSeen != i || ev.CompletionTokensTotal != i*(i+1)/2 {
			t.Errorf("call %d: %+v", i, ev)
		}
	}
	if ev := s.Finish(); ev.CompletionTokensTotal != 6 {
		t.Errorf("Finish: %+v", ev)
	}
}

func FuzzStreamScanner(f *testing.F) {
	f.Add([]byte(chatStream), uint16(10), false)
	f.Add([]byte(`{"usage":{"prompt_tokens":1}}`), uint16(3), true)
	f.Fuzz(func(t *testing.T, data []byte, split uint16, plain bool) {
		whole, _ := feedAll(NewStreamScanner(!plain), data)
		i := int(split) % (len(data) + 1)
		parts, firsts := feedAll(NewStreamScanner(!plain), data[:i], data[i:])
		if firsts > 1 {
			t.Fatalf("FirstToken reported %d times", firsts)
		}
		if whole.FirstToken != parts.FirstToken || whole.Done != parts.Done ||
			whole.CompletionTokensSeen != parts.CompletionTokensSeen || (whole.Usage == nil) != (parts.Usage == nil) ||
			whole.Usage != nil && *whole.Usage != *parts.Usage {
			t.Fatalf("split at %d changed the events: %+v vs %+v", i, whole, parts)
		}
	})
}

func BenchmarkStreamScanner(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&buf, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	buf.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1000}}\n\ndata: [DONE]\n\n")
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewStreamScanner(true)
		for c := stream; len(c) > 0; {
			n := min(1000, len(c)) // chunks split mid-event
			s.Feed(c[:n])
			c = c[n:]
		}
		s.Finish()
	}
}
