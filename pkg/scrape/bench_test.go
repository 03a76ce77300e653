package scrape

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
