package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/request"
)

// parseBody parses an OpenAI body. TEMPORARY: a minimal local parser until
// pkg/request.Parse lands; then this becomes `var parseBody = request.Parse`.
func parseBody(kind request.Kind, body []byte) (*request.Request, error) {
	var raw struct {
		Model    string          `json:"model"`
		Prompt   json.RawMessage `json:"prompt"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, apierr.BadRequest("body is not valid JSON: %v", err)
	}
	r := &request.Request{Kind: kind, Model: raw.Model, Stream: raw.Stream, MaxTokens: raw.MaxTokens, Raw: body}
	if raw.MaxCompletionTokens > 0 {
		r.MaxTokens = raw.MaxCompletionTokens
	}
	r.IncludeUsage = raw.StreamOptions != nil && raw.StreamOptions.IncludeUsage
	switch kind {
	case request.KindCompletions:
		if len(raw.Prompt) == 0 {
			return nil, apierr.BadRequest("missing \"prompt\"")
		}
		var s string
		if json.Unmarshal(raw.Prompt, &s) == nil {
			r.Prompt = s
			return r, nil
		}
		if json.Unmarshal(raw.Prompt, &r.PromptTokenIDs) == nil {
			return r, nil
		}
		return nil, apierr.BadRequest("\"prompt\" must be a string or an array of token ids")
	default:
		if len(raw.Messages) == 0 {
			return nil, apierr.BadRequest("missing \"messages\"")
		}
		var b strings.Builder
		for _, m := range raw.Messages {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return nil, apierr.BadRequest("message content must be a string")
			}
			fmt.Fprintf(&b, "%s: %s\n", m.Role, s)
		}
		r.Prompt = b.String()
		return r, nil
	}
}
