package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxRemoteResponse bounds how much of a /tokenize response is read (a 1M-token
// prompt is about 8 MB of JSON).
const maxRemoteResponse = 64 << 20

// Remote is an exact Tokenizer that asks a vLLM-compatible server: it POSTs
// {"model":..,"prompt":..} to <baseURL>/tokenize and reads {"tokens":[...]}.
// Safe for concurrent use; every error names the URL.
type Remote struct {
	url    string
	client *http.Client
}

// NewRemote returns a Remote for the server at baseURL (e.g.
// "http://10.0.0.7:8000"). A nil client means http.DefaultClient.
func NewRemote(baseURL string, client *http.Client) *Remote {
	if client == nil {
		client = http.DefaultClient
	}
	return &Remote{url: strings.TrimRight(baseURL, "/") + "/tokenize", client: client}
}

type remoteRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
}

type remoteResponse struct {
	Tokens []uint32 `json:"tokens"`
}

// Tokenize asks the server for the tokens of text and appends them to dst.
// It fails on transport errors, non-2xx statuses and bodies without "tokens".
func (r *Remote) Tokenize(ctx context.Context, model string, text []byte, dst []uint32) ([]uint32, error) {
	body, err := json.Marshal(remoteRequest{Model: model, Prompt: string(text)})
	if err != nil {
		return dst, fmt.Errorf("tokenize %s: encode request: %w", r.url, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return dst, fmt.Errorf("tokenize %s: %w", r.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return dst, fmt.Errorf("tokenize %s: %w", r.url, err)
	}
	defer resp.Body.Close()
	return r.decode(resp, dst)
}

// decode reads a /tokenize response into dst.
func (r *Remote) decode(resp *http.Response, dst []uint32) ([]uint32, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRemoteResponse))
	if err != nil {
		return dst, fmt.Errorf("tokenize %s: read response: %w", r.url, err)
	}
	if resp.StatusCode/100 != 2 {
		return dst, fmt.Errorf("tokenize %s: status %d: %.200s", r.url, resp.StatusCode, data)
	}
	var out remoteResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return dst, fmt.Errorf("tokenize %s: decode response: %w", r.url, err)
	}
	if out.Tokens == nil { // absent or null; [] decodes to an empty non-nil slice
		return dst, fmt.Errorf("tokenize %s: response has no \"tokens\"", r.url)
	}
	return append(dst, out.Tokens...), nil
}

// Exact is true: the server's own tokenizer produced the ids.
func (r *Remote) Exact() bool { return true }

// Name is "remote".
func (r *Remote) Name() string { return "remote" }
