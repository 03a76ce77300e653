package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fastArgs make steps short so tests finish quickly.
var fastArgs = []string{"--step-overhead", "200us", "--decode-cost", "1us", "--prefill-rate", "10000000"}

// startServer runs modelsim's handlers and engine loop on a 127.0.0.1 port.
func startServer(t *testing.T, args ...string) (string, *server) {
	t.Helper()
	o, err := parseOptions(append(append([]string{}, fastArgs...), args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newServer(ctx, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go s.run.run(ctx)
	hs := httptest.NewServer(s.routes())
	t.Cleanup(func() { hs.Close(); cancel() })
	return hs.URL, s
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	return readResponse(t)(http.Post(url, "application/json", strings.NewReader(body)))
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return readResponse(t)(http.Get(url))
}

// readResponse returns a reader of a request's outcome: the response and its whole body, failing t on an error.
func readResponse(t *testing.T) func(*http.Response, error) (*http.Response, []byte) {
	return func(resp *http.Response, err error) (*http.Response, []byte) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, data
	}
}

// sseEvents reads an SSE body into its data payloads.
func sseEvents(t *testing.T, body io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("unexpected SSE line %q", line)
		}
		out = append(out, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// chunk is the union of the streamed chunk shapes the tests inspect.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageBody `json:"usage"`
}

func decodeChunk(t *testing.T, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	return c
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func newLoopbackServer(s *server) *httptest.Server { return httptest.NewServer(s.routes()) }
