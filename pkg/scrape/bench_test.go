package scrape

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
)

// BenchmarkParse parses a realistic vLLM page (~300 lines, ten histograms).
func BenchmarkParse(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("testdata", "vllm.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(EngineVLLM, bytes.NewReader(page)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetch is one scrape attempt of a vLLM page over loopback HTTP
// with a kept-alive connection: the per-endpoint cost of each poll.
func BenchmarkFetch(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("testdata", "vllm.txt"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(page) }))
	defer srv.Close()
	s := New(Options{}, nil, logr.Discard())
	t := Target{Key: "bench", URL: srv.URL + "/metrics"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.fetch(context.Background(), t); err != nil {
			b.Fatal(err)
		}
	}
}
