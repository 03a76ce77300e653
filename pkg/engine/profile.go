package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/yaml"
)

// duration decodes "10ms"-style strings (or integer nanoseconds) in profiles.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("duration: want a string like \"10ms\": %w", err)
		}
		*d = duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = duration(v)
	return nil
}

// profile mirrors Config with human-readable durations.
type profile struct {
	BlockSize           int      `json:"blockSize"`
	NumGPUBlocks        int      `json:"numGpuBlocks"`
	MaxNumBatchedTokens int      `json:"maxNumBatchedTokens"`
	MaxNumSeqs          int      `json:"maxNumSeqs"`
	PrefillTokensPerSec float64  `json:"prefillTokensPerSec"`
	StepOverhead        duration `json:"stepOverhead"`
	DecodeCostPerSeq    duration `json:"decodeCostPerSeq"`
	MaxModelLen         int      `json:"maxModelLen"`
	MaxLoRAs            int      `json:"maxLoras"`
	DefaultMaxTokens    int      `json:"defaultMaxTokens"`
	Seed                int64    `json:"seed"`
	HashSeed            uint64   `json:"hashSeed"`
	DecodeCostPerCtx    duration `json:"decodeCostPerContextToken"`
	AttentionLen        int      `json:"attentionLen"`
}

// ParseProfile overlays the YAML (or JSON) document data onto base; keys not
// present keep base's value and unknown keys are errors. The result is
// validated.
func ParseProfile(base Config, data []byte) (Config, error) {
	p := profile{
		base.BlockSize, base.NumGPUBlocks, base.MaxNumBatchedTokens, base.MaxNumSeqs,
		base.PrefillTokensPerSec, duration(base.StepOverhead), duration(base.DecodeCostPerSeq),
		base.MaxModelLen, base.MaxLoRAs, base.DefaultMaxTokens, base.Seed, base.HashSeed,
		duration(base.DecodeCostPerContextToken), base.AttentionLen,
	}
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return base, fmt.Errorf("engine profile: %w", err)
	}
	c := Config{
		p.BlockSize, p.NumGPUBlocks, p.MaxNumBatchedTokens, p.MaxNumSeqs, p.PrefillTokensPerSec,
		time.Duration(p.StepOverhead), time.Duration(p.DecodeCostPerSeq),
		p.MaxModelLen, p.MaxLoRAs, p.DefaultMaxTokens, p.Seed, p.HashSeed,
		time.Duration(p.DecodeCostPerCtx), p.AttentionLen,
	}
	if err := c.Validate(); err != nil {
		return base, fmt.Errorf("engine profile: %w", err)
	}
	return c, nil
}

// LoadProfile reads a profile file and overlays it onto base (see ParseProfile).
func LoadProfile(base Config, path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("engine profile: %w", err)
	}
	return ParseProfile(base, data)
}
