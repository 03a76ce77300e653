package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseOptionsLayering(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(profile, []byte("stepOverhead: 3ms\nmaxNumSeqs: 64\nblockSize: 32\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseOptions([]string{"--profile", profile, "--block-size", "8", "--lora-adapters", "a,,b, a"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.engine
	if c.StepOverhead != 3*time.Millisecond || c.MaxNumSeqs != 64 || c.BlockSize != 8 || c.MaxNumBatchedTokens != 8192 {
		t.Fatalf("engine config %+v: want profile values, flag overriding blockSize, defaults elsewhere", c)
	}
	if l := o.loraNames(); len(l) != 2 || !l["a"] || !l["b"] {
		t.Fatalf("loras %v", l)
	}
}

func TestParseOptionsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-style", "trt"}, "--metrics-style"},
		{[]string{"--kv-events-encoding", "json"}, "--kv-events-encoding"},
		{[]string{"--fail-status", "404"}, "--fail-status"},
		{[]string{"--fail-fraction", "2"}, "--fail-fraction"},
		{[]string{"--block-size", "0"}, "blockSize"},
		{[]string{"--profile", "/nonexistent/p.yaml"}, "profile"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	}
	for _, tc := range tests {
		if _, err := parseOptions(tc.args, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseOptions(%v) = %v, want error mentioning %s", tc.args, err, tc.want)
		}
	}
}

func TestFaultsDelayBounded(t *testing.T) {
	f := newFaults(1, 5*time.Millisecond, 0.5, 503)
	fails := 0
	for range 1000 {
		if d := f.delay(); d < 0 || d >= 5*time.Millisecond {
			t.Fatalf("delay %v outside [0, 5ms)", d)
		}
		if f.failure() != nil {
			fails++
		}
	}
	if fails < 400 || fails > 600 {
		t.Fatalf("%d failures of 1000 at fraction 0.5", fails)
	}
}
