package scrape

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic and that every accepted
// page yields a Sample within its documented ranges.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	f.Add([]byte(`{"vllm:num_requests_running",x="\"} 1`), uint8(0))
	engines := []Engine{EngineVLLM, EngineSGLang, EngineTRTLLM, EngineTriton, ""}
	f.Fuzz(func(t *testing.T, page []byte, e uint8) {
		s, err := Parse(engines[int(e)%len(engines)], bytes.NewReader(page))
		if err != nil {
			return
		}
		if s.Waiting < 0 || s.Running < 0 || s.KVUsage < 0 || s.KVUsage > 1 || s.BlockSize < 0 || s.TotalBlocks < 0 {
			t.Fatalf("out-of-range sample %+v", s)
		}
	})
}
