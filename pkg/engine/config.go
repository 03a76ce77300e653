package engine

import (
	"errors"
	"fmt"
	"time"
)

// Config holds every constant of the engine model. The defaults model one
// Qwen3-32B replica on 2x H100 (TP2) under vLLM; each default names its source
// (shared/reference/engine-calibration.md) or says it is derived.
type Config struct {
	// BlockSize is tokens per KV block. Default 16: vLLM's KV block size.
	BlockSize int `json:"blockSize"`
	// NumGPUBlocks is the KV cache capacity in blocks. Default 19,000, derived:
	// 2x80 GB at 0.9 utilisation minus 64 GB of weights leaves ~80 GB; Qwen3-32B
	// stores 64 layers x 8 KV heads x 128 dims x 2 (K,V) x 2 bytes = 256 KiB per
	// token, so ~305k tokens / 16.
	NumGPUBlocks int `json:"numGpuBlocks"`
	// MaxNumBatchedTokens caps the tokens (decodes plus prefill chunks) of one
	// step. Default 8,192: vLLM's API-server default on GPUs with >= 70 GiB.
	MaxNumBatchedTokens int `json:"maxNumBatchedTokens"`
	// MaxNumSeqs caps running requests. Default 256 (vLLM's value for smaller
	// GPUs; H100s default to 1,024, set it explicitly to model that).
	MaxNumSeqs int `json:"maxNumSeqs"`
	// PrefillTokensPerSec is the prefill throughput. Default 15,928 tokens/s: the
	// llm-d row "Qwen3-32B | 2x H100 (TP2) | vLLM", value of their shipped recipe.
	PrefillTokensPerSec float64 `json:"prefillTokensPerSec"`
	// StepOverhead is the fixed cost of one step. Default 10ms, derived: one
	// read of 32 GB of weights per GPU at ~3.35 TB/s.
	StepOverhead time.Duration `json:"stepOverhead"`
	// DecodeCostPerSeq is the extra step time per decoding request besides
	// reading its KV context. Default 20µs, derived: the former 100µs for a
	// ~2k-token request minus that context's KV reads (2k x 39ns).
	DecodeCostPerSeq time.Duration `json:"decodeCostPerSeq"`
	// MaxModelLen caps prompt plus output tokens; longer requests are refused
	// (vLLM answers 400); 0 means the KV capacity. Default 40,960: Qwen3-32B's
	// max_position_embeddings, vLLM's default max_model_len for it.
	MaxModelLen int `json:"maxModelLen"`
	// MaxLoRAs caps distinct LoRA adapters among running requests. Default 1
	// (vLLM's max_loras); 0 means unlimited.
	MaxLoRAs int `json:"maxLoras"`
	// DefaultMaxTokens is the output length when a request leaves MaxTokens
	// unset. Default 16 (vLLM's completions default).
	DefaultMaxTokens int `json:"defaultMaxTokens"`
	// Seed makes the generated output tokens reproducible.
	Seed int64 `json:"seed"`
	// HashSeed seeds the engine's block hashes (like vLLM's PYTHONHASHSEED);
	// different seeds give different hashes for the same tokens.
	HashSeed uint64 `json:"hashSeed"`
	// DecodeCostPerContextToken is the step time each decoding request adds
	// per token of context it holds (its KV is read once per step). Default
	// 39ns, derived: Qwen3-32B keeps 256 KiB of KV per token, 128 KiB per GPU
	// at TP2, read at H100's ~3.35 TB/s; a 12k-token context adds ~0.5ms.
	DecodeCostPerContextToken time.Duration `json:"decodeCostPerContextToken"`
	// AttentionLen makes prefill grow with prompt length: a prompt of L tokens
	// costs L*(1+L/AttentionLen) tokens at PrefillTokensPerSec (0: flat).
	// Default 60,000, derived: Qwen3-32B's causal attention at position p
	// costs 4 x 64 layers x 8,192 query dims x p FLOPs against 2 x 32e9 for
	// the weights, i.e. 1+p/30,500 per token; so +20% at 12k tokens, +67% at
	// 40k, +167% at 100k relative to a short prompt.
	AttentionLen int `json:"attentionLen"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		BlockSize:                 16,
		NumGPUBlocks:              19000,
		MaxNumBatchedTokens:       8192,
		MaxNumSeqs:                256,
		PrefillTokensPerSec:       15928,
		StepOverhead:              10 * time.Millisecond,
		DecodeCostPerSeq:          20 * time.Microsecond,
		MaxModelLen:               40960,
		DecodeCostPerContextToken: 39 * time.Nanosecond,
		AttentionLen:              60000,
		MaxLoRAs:                  1,
		DefaultMaxTokens:          16,
		HashSeed:                  0x6d6f64656c73696d, // "modelsim"
	}
}

// Validate returns every problem with c at once, each naming the field.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be > 0, got %d", name, v))
		}
	}
	positive("blockSize", c.BlockSize)
	positive("numGpuBlocks", c.NumGPUBlocks)
	positive("maxNumBatchedTokens", c.MaxNumBatchedTokens)
	positive("maxNumSeqs", c.MaxNumSeqs)
	positive("defaultMaxTokens", c.DefaultMaxTokens)
	if !(c.PrefillTokensPerSec > 0) {
		errs = append(errs, fmt.Errorf("prefillTokensPerSec: must be > 0, got %v", c.PrefillTokensPerSec))
	}
	if c.StepOverhead < 0 {
		errs = append(errs, fmt.Errorf("stepOverhead: must be >= 0, got %v", c.StepOverhead))
	}
	if c.DecodeCostPerSeq < 0 {
		errs = append(errs, fmt.Errorf("decodeCostPerSeq: must be >= 0, got %v", c.DecodeCostPerSeq))
	}
	if c.DecodeCostPerContextToken < 0 {
		errs = append(errs, fmt.Errorf("decodeCostPerContextToken: must be >= 0, got %v", c.DecodeCostPerContextToken))
	}
	if c.AttentionLen < 0 {
		errs = append(errs, fmt.Errorf("attentionLen: must be >= 0, got %d", c.AttentionLen))
	}
	if c.MaxModelLen < 0 {
		errs = append(errs, fmt.Errorf("maxModelLen: must be >= 0, got %d", c.MaxModelLen))
	}
	if c.MaxLoRAs < 0 {
		errs = append(errs, fmt.Errorf("maxLoras: must be >= 0, got %d", c.MaxLoRAs))
	}
	return errors.Join(errs...)
}

// maxLen is the longest sequence (prompt plus output) the engine accepts.
func (c Config) maxLen() int {
	capacity := c.BlockSize * c.NumGPUBlocks
	if c.MaxModelLen > 0 && c.MaxModelLen < capacity {
		return c.MaxModelLen
	}
	return capacity
}
