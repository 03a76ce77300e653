package main

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/request"
)

type modelCard struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	Created     int64   `json:"created"`
	OwnedBy     string  `json:"owned_by"`
	Root        string  `json:"root"`
	Parent      *string `json:"parent"`
	MaxModelLen int     `json:"max_model_len"`
}

// models lists the base model and its LoRA adapters, as vLLM does.
func (s *server) models(w http.ResponseWriter, _ *http.Request) {
	cards := []modelCard{{ID: s.model, Object: "model", Created: s.now(), OwnedBy: "vllm", Root: s.model,
		MaxModelLen: s.maxLen}}
	names := make([]string, 0, len(s.loras))
	for name := range s.loras {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cards = append(cards, modelCard{ID: name, Object: "model", Created: s.now(), OwnedBy: "vllm",
			Root: name, Parent: &s.model, MaxModelLen: s.maxLen})
	}
	writeJSON(w, map[string]any{"object": "list", "data": cards})
}

// tokenize serves vLLM's POST /tokenize for {"model","prompt"} or
// {"model","messages"}.
func (s *server) tokenize(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, apierr.BadRequest("reading body: %v", err))
		return
	}
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		writeError(w, apierr.BadRequest("body is not valid JSON: %v", err))
		return
	}
	kind := request.KindCompletions
	if len(probe.Messages) > 0 {
		kind = request.KindChatCompletions
	}
	req, err := s.parseFor(body, kind)
	if err != nil {
		writeError(w, err)
		return
	}
	tokens := promptTokens(req)
	writeJSON(w, map[string]any{"count": len(tokens), "max_model_len": s.maxLen, "tokens": tokens,
		"token_strs": nil})
}

// parseFor parses body and checks its model.
func (s *server) parseFor(body []byte, kind request.Kind) (*request.Request, error) {
	req, err := parseBody(kind, body)
	if err != nil {
		if e := apierr.As(err); e.Status != http.StatusInternalServerError {
			return nil, e
		}
		return nil, apierr.BadRequest("invalid body: %v", err)
	}
	if _, err := s.resolveModel(req.Model); err != nil {
		return nil, err
	}
	return req, nil
}

// renderedPrompt is one rendered engine prompt. token_ids is the field of
// vLLM's GenerateRequest; prompt_token_ids that of its older engine prompts;
// both carry the same ids.
type renderedPrompt struct {
	Model          string   `json:"model"`
	Prompt         string   `json:"prompt,omitempty"`
	TokenIDs       []uint32 `json:"token_ids"`
	PromptTokenIDs []uint32 `json:"prompt_token_ids"`
}

// render serves /v1/completions/render (a JSON array with one prompt) and
// /v1/chat/completions/render (one object): the token ids the engine would
// see for the same body, without generating.
func (s *server) render(kind request.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := s.readRequest(w, r, kind)
		if err == nil {
			_, err = s.resolveModel(req.Model)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		model := req.Model
		if model == "" {
			model = s.model
		}
		tokens := promptTokens(req)
		out := renderedPrompt{Model: model, Prompt: string(req.Prompt), TokenIDs: tokens, PromptTokenIDs: tokens}
		if kind == request.KindCompletions {
			writeJSON(w, []renderedPrompt{out})
			return
		}
		writeJSON(w, out)
	}
}
