package engine

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	c := DefaultConfig()
	c.BlockSize, c.PrefillTokensPerSec, c.StepOverhead = 0, 0, -1
	err := c.Validate()
	for _, field := range []string{"blockSize", "prefillTokensPerSec", "stepOverhead"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %v, want mention of %s", err, field)
		}
	}
}

func TestParseProfile(t *testing.T) {
	tests := []struct {
		name, doc string
		check     func(Config) bool
		wantErr   string
	}{
		{"durations", "stepOverhead: 2ms\ndecodeCostPerSeq: 50us\nmaxNumSeqs: 1024\n", func(c Config) bool {
			return c.StepOverhead == 2*time.Millisecond && c.DecodeCostPerSeq == 50*time.Microsecond &&
				c.MaxNumSeqs == 1024 && c.BlockSize == 16
		}, ""},
		{"unknown key", "stepCost: 2ms\n", nil, "stepCost"},
		{"invalid", "blockSize: -1\n", nil, "blockSize"},
		{"bad duration", "stepOverhead: soon\n", nil, "duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseProfile(DefaultConfig(), []byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("ParseProfile = %+v, %v", c, err)
			}
		})
	}
}
