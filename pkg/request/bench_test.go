package request

import (
	"encoding/json"
	"strings"
	"testing"
)

// longText returns about n bytes of prose with newlines, quotes and a few
// non-ASCII characters, so its JSON encoding has escapes.
func longText(n int) string {
	const para = "The quick brown fox jumps over the lazy dog. \"Quoted\" text, tabs\tand naïve café résumé.\n" +
		"Large language models serve many concurrent requests; a shared prefix cache skips recomputation.\n\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	return b.String()[:n]
}

// paragraphText returns about n bytes of ASCII paragraphs of ~600 bytes
// separated by blank lines: fewer escapes than longText, as in most prose.
func paragraphText(n int) string {
	para := strings.Repeat("Large language models serve many concurrent requests; a shared prefix cache skips recomputation. ", 6) + "\n\n"
	return strings.Repeat(para, n/len(para)+1)[:n]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatBody is a chat request with role before content, as clients send it.
func chatBody(n int) []byte {
	return mustJSON(map[string]any{
		"model": "meta-llama/Llama-3.1-8B-Instruct",
		"messages": []msg{
			{Role: "system", Content: "You are a helpful assistant."},
			{Role: "user", Content: longText(n)},
		},
		"stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 256,
		"temperature": 0.7, "tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "f", "parameters": map[string]any{"type": "object"}}}},
	})
}

// chatBodyContentFirst puts "content" before "role" (as Go maps marshal),
// exercising the insert-the-role-prefix path.
func chatBodyContentFirst(n int) []byte {
	return mustJSON(map[string]any{"model": "m", "messages": []map[string]any{{"role": "user", "content": longText(n)}}})
}

func completionsBody(n int) []byte {
	return mustJSON(map[string]any{"model": "m", "prompt": longText(n), "max_tokens": 16, "stream": false})
}

func benchParse(b *testing.B, kind Kind, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(kind, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse220KB(b *testing.B) {
	b.Run("chat", func(b *testing.B) { benchParse(b, KindChatCompletions, chatBody(220<<10)) })
	b.Run("completions", func(b *testing.B) { benchParse(b, KindCompletions, completionsBody(220<<10)) })
	b.Run("chat_content_first", func(b *testing.B) { benchParse(b, KindChatCompletions, chatBodyContentFirst(220<<10)) })
	b.Run("token_ids", func(b *testing.B) { benchParse(b, KindCompletions, tokenIDsBody(220<<10)) })
}

// BenchmarkParse32KB is the size on the decision path: an 8,000-token
// prompt (about 4 bytes a token).
func BenchmarkParse32KB(b *testing.B) {
	b.Run("completions", func(b *testing.B) { benchParse(b, KindCompletions, completionsBody(32000)) })
	b.Run("chat", func(b *testing.B) { benchParse(b, KindChatCompletions, chatBody(32000)) })
	b.Run("chat_content_first", func(b *testing.B) { benchParse(b, KindChatCompletions, chatBodyContentFirst(32000)) })
	b.Run("completions_paragraphs", func(b *testing.B) {
		benchParse(b, KindCompletions, mustJSON(map[string]any{"model": "m", "prompt": paragraphText(32000)}))
	})
}

// tokenIDsBody is a completions request whose prompt is about n bytes of
// token ids.
func tokenIDsBody(n int) []byte {
	var ids []uint32
	for i := uint32(0); len(ids)*7 < n; i++ {
		ids = append(ids, i*7919%128000)
	}
	return mustJSON(map[string]any{"model": "m", "prompt": ids})
}

// BenchmarkEncodingJSON220KB is the baseline the scanner was chosen over.
func BenchmarkEncodingJSON220KB(b *testing.B) {
	body := chatBody(220 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var v struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
			Stream   bool              `json:"stream"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
