package main

import (
	"encoding/json"
	"strconv"

	"github.com/kvpick/kvpick/pkg/engine"
)

// chunker formats one request's OpenAI responses. Streamed chunks are built
// by appending bytes (the hot path at thousands of requests per second);
// generated text is vocabulary words that need no JSON escaping.
type chunker struct {
	head    []byte // `data: {"id":...,"choices":[` shared by every chunk
	chat    bool
	id      string
	model   string
	created int64
	buf     []byte
}

func newChunker(id string, chat bool, model string, created int64) chunker {
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	quoted, _ := json.Marshal(model) // a string always marshals
	head := []byte(`data: {"id":"` + id + `","object":"` + object + `","created":`)
	head = strconv.AppendInt(head, created, 10)
	head = append(head, `,"model":`...)
	head = append(head, quoted...)
	head = append(head, `,"choices":[`...)
	return chunker{head: head, chat: chat, id: id, model: model, created: created}
}

// appendToken appends the SSE chunk carrying u's token.
func (c *chunker) appendToken(dst []byte, v *vocab, u engine.Update) []byte {
	dst = append(dst, c.head...)
	if c.chat {
		dst = append(dst, `{"index":0,"delta":{`...)
		if u.First {
			dst = append(dst, `"role":"assistant",`...)
		}
		dst = append(dst, `"content":"`...)
		dst = v.appendText(dst, u.Token)
		dst = append(dst, `"},"logprobs":null,"finish_reason":`...)
	} else {
		dst = append(dst, `{"index":0,"text":"`...)
		dst = v.appendText(dst, u.Token)
		dst = append(dst, `","logprobs":null,"finish_reason":`...)
	}
	if u.Finished {
		dst = append(dst, `"length"`...)
	} else {
		dst = append(dst, `null`...)
	}
	return append(dst, "}]}\n\n"...)
}

// appendUsage appends the final usage-only chunk (stream_options.include_usage).
func (c *chunker) appendUsage(dst []byte, u engine.Update) []byte {
	dst = append(dst, c.head...)
	dst = append(dst, `],"usage":`...)
	dst = appendUsageJSON(dst, u)
	return append(dst, "}\n\n"...)
}

func appendUsageJSON(dst []byte, u engine.Update) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens+u.OutputTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CachedTokens), 10)
	return append(dst, "}}"...)
}

// Non-streamed response bodies.
type (
	usageBody struct {
		PromptTokens        int `json:"prompt_tokens"`
		TotalTokens         int `json:"total_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	choice struct {
		Index        int      `json:"index"`
		Text         *string  `json:"text,omitempty"`
		Message      *message `json:"message,omitempty"`
		Logprobs     any      `json:"logprobs"`
		FinishReason string   `json:"finish_reason"`
	}
	responseBody struct {
		ID      string    `json:"id"`
		Object  string    `json:"object"`
		Created int64     `json:"created"`
		Model   string    `json:"model"`
		Choices []choice  `json:"choices"`
		Usage   usageBody `json:"usage"`
	}
)

// final is the non-streamed response for the finished update u.
func (c *chunker) final(text string, u engine.Update) responseBody {
	b := responseBody{ID: c.id, Object: "text_completion", Created: c.created, Model: c.model}
	ch := choice{FinishReason: "length"}
	if c.chat {
		b.Object = "chat.completion"
		ch.Message = &message{Role: "assistant", Content: text}
	} else {
		ch.Text = &text
	}
	b.Choices = []choice{ch}
	b.Usage.PromptTokens, b.Usage.CompletionTokens = u.PromptTokens, u.OutputTokens
	b.Usage.TotalTokens = u.PromptTokens + u.OutputTokens
	b.Usage.PromptTokensDetails.CachedTokens = u.CachedTokens
	return b
}
