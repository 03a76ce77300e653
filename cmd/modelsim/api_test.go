package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kvpick/kvpick/pkg/tokenize"
)

func TestStreamingCompletions(t *testing.T) {
	url, _ := startServer(t)
	tests := []struct {
		name, path, body string
		chat, usage      bool
	}{
		{"completions", "/v1/completions", `{"model":"modelsim","prompt":"tell me a story","max_tokens":5,"stream":true}`, false, false},
		{"completions usage", "/v1/completions",
			`{"model":"modelsim","prompt":"tell me a story","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, false, true},
		{"chat usage", "/v1/chat/completions", `{"model":"modelsim","messages":[{"role":"user","content":"hi there"}],` +
			`"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(url+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("content type %q", ct)
			}
			evs := sseEvents(t, resp.Body)
			if evs[len(evs)-1] != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", evs[len(evs)-1])
			}
			want := 5
			if tc.usage {
				want++
			}
			if got := len(evs) - 1; got != want {
				t.Fatalf("%d chunks, want %d: %v", got, want, evs)
			}
			checkChunks(t, evs[:5], tc.chat)
			if tc.usage {
				u := decodeChunk(t, evs[5]).Usage
				if u == nil || u.CompletionTokens != 5 || u.PromptTokens == 0 || u.TotalTokens != u.PromptTokens+5 {
					t.Fatalf("usage chunk %s", evs[5])
				}
			}
		})
	}
}

func checkChunks(t *testing.T, evs []string, chat bool) {
	t.Helper()
	for i, ev := range evs {
		c := decodeChunk(t, ev)
		if len(c.Choices) != 1 || c.Model != "modelsim" {
			t.Fatalf("chunk %d: %s", i, ev)
		}
		ch := c.Choices[0]
		last := i == len(evs)-1
		if (ch.FinishReason != nil) != last || (last && *ch.FinishReason != "length") {
			t.Fatalf("chunk %d finish_reason wrong: %s", i, ev)
		}
		if chat {
			if ch.Delta == nil || ch.Delta.Content == "" || (i == 0) != (ch.Delta.Role == "assistant") {
				t.Fatalf("chat chunk %d: %s", i, ev)
			}
			continue
		}
		if ch.Text == nil || *ch.Text == "" || c.Object != "text_completion" {
			t.Fatalf("completion chunk %d: %s", i, ev)
		}
	}
}

func TestUsageReportsCachedTokens(t *testing.T) {
	url, _ := startServer(t)
	prompt := strings.Repeat("the quick brown fox jumps over the lazy dog ", 20)
	body := fmt.Sprintf(`{"model":"modelsim","prompt":%q,"max_tokens":2}`, prompt)
	var usages []usageBody
	for range 2 {
		resp, data := post(t, url+"/v1/completions", body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		}
		var r responseBody
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Choices[0].Text == nil || len(strings.Fields(*r.Choices[0].Text)) != 2 {
			t.Fatalf("response %s", data)
		}
		usages = append(usages, r.Usage)
	}
	n := tokenize.CountApprox(prompt)
	if usages[0].PromptTokens != n || usages[0].PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("cold usage %+v, want %d prompt tokens, 0 cached", usages[0], n)
	}
	if want := (n - 1) / 16 * 16; usages[1].PromptTokensDetails.CachedTokens != want {
		t.Fatalf("warm cached_tokens %d, want %d", usages[1].PromptTokensDetails.CachedTokens, want)
	}
}

func TestNonStreamingChat(t *testing.T) {
	url, _ := startServer(t, "--lora-adapters", "sql-lora")
	resp, data := post(t, url+"/v1/chat/completions",
		`{"model":"sql-lora","messages":[{"role":"user","content":"hello"}],"max_completion_tokens":3}`)
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d body %s err %v", resp.StatusCode, data, err)
	}
	if c.Object != "chat.completion" || c.Model != "sql-lora" || c.Choices[0].Message == nil ||
		len(strings.Fields(c.Choices[0].Message.Content)) != 3 || c.Usage.CompletionTokens != 3 {
		t.Fatalf("response %s", data)
	}
}

func TestErrors(t *testing.T) {
	url, _ := startServer(t)
	tests := []struct {
		name, method, path, body string
		status                   int
		typ, msg                 string
	}{
		{"not json", "POST", "/v1/completions", `{"model":"modelsim","prompt":`, 400, "invalid_request_error", "JSON"},
		{"no prompt", "POST", "/v1/completions", `{"model":"modelsim"}`, 400, "invalid_request_error", "prompt"},
		{"no messages", "POST", "/v1/chat/completions", `{"model":"modelsim"}`, 400, "invalid_request_error", "messages"},
		{"unknown model", "POST", "/v1/completions", `{"model":"gpt-9","prompt":"x"}`, 404, "not_found_error", "gpt-9"},
		{"too long", "POST", "/v1/completions", `{"model":"modelsim","prompt":"x","max_tokens":100000000}`, 400, "invalid_request_error", "limit"},
		{"unknown route", "GET", "/v2/nothing", ``, 404, "not_found_error", "/v2/nothing"},
		{"wrong method", "GET", "/v1/completions", ``, 404, "not_found_error", "GET"},
		{"tokenize bad", "POST", "/tokenize", `[1,2`, 400, "invalid_request_error", "JSON"},
		{"render unknown model", "POST", "/v1/chat/completions/render",
			`{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "not_found_error", "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct{ Type, Message string } `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if resp.StatusCode != tc.status || e.Error.Type != tc.typ || !strings.Contains(e.Error.Message, tc.msg) ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %+v, want %d %s mentioning %q", resp.StatusCode, e.Error, tc.status, tc.typ, tc.msg)
			}
		})
	}
}

func TestInjectedFailures(t *testing.T) {
	for _, status := range []int{500, 503} {
		url, _ := startServer(t, "--fail-fraction", "1", "--fail-status", fmt.Sprint(status))
		resp, data := post(t, url+"/v1/completions", `{"model":"modelsim","prompt":"x"}`)
		if resp.StatusCode != status || !strings.Contains(string(data), "injected") {
			t.Fatalf("status %d body %s, want %d", resp.StatusCode, data, status)
		}
	}
}

func TestTokenizeAndRenderAgree(t *testing.T) {
	url, _ := startServer(t)
	text := "Hello, world! Tokens are   deterministic."
	want := tokenize.Approx(nil, text)
	var tok struct {
		Count  int      `json:"count"`
		Tokens []uint32 `json:"tokens"`
	}
	_, data := post(t, url+"/tokenize", fmt.Sprintf(`{"model":"modelsim","prompt":%q}`, text))
	if err := json.Unmarshal(data, &tok); err != nil || !slices.Equal(tok.Tokens, want) || tok.Count != len(want) {
		t.Fatalf("tokenize %s, want %v", data, want)
	}
	var rc []renderedPrompt
	_, data = post(t, url+"/v1/completions/render", fmt.Sprintf(`{"model":"modelsim","prompt":%q}`, text))
	if err := json.Unmarshal(data, &rc); err != nil || len(rc) != 1 || !slices.Equal(rc[0].TokenIDs, want) {
		t.Fatalf("completions render %s", data)
	}
	chatBody := fmt.Sprintf(`{"model":"modelsim","messages":[{"role":"user","content":%q}]}`, text)
	var chatTok, chatRender struct {
		Tokens   []uint32 `json:"tokens"`
		TokenIDs []uint32 `json:"token_ids"`
	}
	_, data = post(t, url+"/tokenize", chatBody)
	json.Unmarshal(data, &chatTok) //nolint:errcheck // checked below
	_, data = post(t, url+"/v1/chat/completions/render", chatBody)
	json.Unmarshal(data, &chatRender) //nolint:errcheck
	if len(chatTok.Tokens) == 0 || !slices.Equal(chatTok.Tokens, chatRender.TokenIDs) {
		t.Fatalf("chat tokenize %v != render %v", chatTok.Tokens, chatRender.TokenIDs)
	}
}

func TestModelsAndHealth(t *testing.T) {
	url, _ := startServer(t, "--model", "base", "--lora-adapters", "a, b")
	resp, err := http.Get(url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []modelCard `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list) //nolint:errcheck
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"base", "a", "b"}) || list.Data[1].Parent == nil || *list.Data[1].Parent != "base" {
		t.Fatalf("models %+v", list.Data)
	}
}
