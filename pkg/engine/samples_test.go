package engine

import (
	"path/filepath"
	"testing"
)

// The engine profiles shipped in config/samples must load and validate.
func TestSampleProfiles(t *testing.T) {
	files, err := filepath.Glob("../../config/samples/engine-*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("sample profiles: %v %v", files, err)
	}
	for _, f := range files {
		cfg, err := LoadProfile(DefaultConfig(), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
