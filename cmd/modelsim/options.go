package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kvpick/kvpick/internal/cli"
	"github.com/kvpick/kvpick/pkg/engine"
)

// options are modelsim's command-line settings.
type options struct {
	host, model, loraAdapters, profile, metricsStyle  string
	port                                              int
	kvEndpoint, kvReplay, kvTopic, kvEncoding         string
	kvSalt                                            string
	kvBytesHashes, kvHybrid, kvOffload, kvReplayPlain bool
	kvBufferSteps, dpRank                             int
	jitter                                            time.Duration
	failFraction, dropEvents                          float64
	failStatus                                        int
	engine                                            engine.Config
}

// program describes modelsim for --help and error messages.
var program = cli.Program{
	Name: "modelsim",
	About: "a simulated vLLM-compatible model server (OpenAI completions and chat, /tokenize, vLLM metrics, " +
		"KV events over ZMQ) whose timing follows the pkg/engine model; no GPU, no model weights.",
	Synopsis: "modelsim [--port 8000] [--model NAME] [flags]",
	Notes: `Example: two simulated replicas for a local kvpick (README, "Run it by hand"):
  bin/modelsim --port 8001 --model demo-model &
  bin/modelsim --port 8002 --model demo-model &`,
}

// parseOptions reads args; --help writes the usage to help. Engine settings
// layer as defaults, then --profile, then engine flags given explicitly.
func parseOptions(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("modelsim", flag.ContinueOnError)
	fs.StringVar(&o.host, "host", "127.0.0.1", "address to listen on")
	fs.IntVar(&o.port, "port", 8000, "port to listen on (0 = any free port)")
	fs.StringVar(&o.model, "model", "modelsim", "served model name")
	fs.StringVar(&o.loraAdapters, "lora-adapters", "", "comma-separated LoRA adapter names served besides the model")
	fs.StringVar(&o.profile, "profile", "", "YAML file of engine settings (pkg/engine Config field names)")
	fs.StringVar(&o.metricsStyle, "metrics-style", "vllm", "metrics dialect: "+strings.Join(metricsStyles, ", ")+
		" (trtllm: Prometheus text at /prometheus/metrics, JSON iteration stats at /metrics, as trtllm-serve)")
	fs.StringVar(&o.kvEndpoint, "kv-events-endpoint", "", `ZMQ PUB endpoint for KV events ("" = off; "tcp://*:5557" binds)`)
	fs.StringVar(&o.kvReplay, "kv-events-replay-endpoint", "", "ZMQ ROUTER endpoint serving replay (\"\" = off)")
	fs.StringVar(&o.kvTopic, "kv-events-topic", "", "topic frame of KV event messages")
	fs.StringVar(&o.kvEncoding, "kv-events-encoding", "map", "KV event msgpack layout: array (SGLang, old vLLM), map (current vLLM), "+
		"mixed (vLLM v0.2x: positional batch of map events)")
	fs.BoolVar(&o.kvReplayPlain, "kv-events-replay-plain", false, "answer replay as vLLM before v0.26 and SGLang do: [seq, payload] "+
		"(default: [topic, seq, payload], as vLLM since v0.26)")
	fs.BoolVar(&o.kvBytesHashes, "kv-events-bytes-hashes", false, "send block hashes as 32-byte strings (vLLM's sha256 hashers, CPU offload)")
	fs.BoolVar(&o.kvOffload, "kv-events-offload", false, "report a CPU offload tier: every store also as medium CPU; GPU evictions "+
		"leave the CPU copy")
	fs.StringVar(&o.kvSalt, "kv-events-cache-salt", "", "stamp every BlockStored with this cache salt as SGLang does (positional: 8th element "+
		"{cache_salt}; map: metadata); requests must carry the same cache_salt to match")
	fs.BoolVar(&o.kvHybrid, "kv-events-hybrid", false, "a hybrid model as current vLLM reports it: extra_keys, group_idx and "+
		"kv_cache_spec_kind on stores, and a sliding-window group 1 whose blocks are stored and at once removed")
	fs.IntVar(&o.kvBufferSteps, "kv-events-buffer-steps", 10000, "batches kept for replay")
	fs.IntVar(&o.dpRank, "dp-rank", -1, "data-parallel rank: stamped on KV event batches and added to the event ports, as vLLM "+
		"and SGLang do (-1 = none; a port of 0 is not offset)")
	fs.DurationVar(&o.jitter, "jitter", 0, "add a uniform random latency in [0, jitter) before each request")
	fs.Float64Var(&o.failFraction, "fail-fraction", 0, "fraction of generation requests to fail")
	fs.IntVar(&o.failStatus, "fail-status", http.StatusServiceUnavailable, "status of failed requests: 500 or 503")
	fs.Float64Var(&o.dropEvents, "drop-events-fraction", 0, "fraction of KV event batches to drop (sequence gaps)")
	ef := bindEngineFlags(fs)
	if err := program.Parse(fs, args, help); err != nil {
		return o, err
	}
	cfg, err := ef.config(fs, o.profile)
	if err != nil {
		return o, err
	}
	o.engine = cfg
	return o, o.validate()
}

func (o options) validate() error {
	var errs []error
	if !slices.Contains(metricsStyles, o.metricsStyle) {
		errs = append(errs, fmt.Errorf("--metrics-style: want one of %v, got %q", metricsStyles, o.metricsStyle))
	}
	if _, ok := kvEncodings[o.kvEncoding]; !ok {
		errs = append(errs, fmt.Errorf("--kv-events-encoding: want array, map or mixed, got %q", o.kvEncoding))
	}
	if o.failStatus != 500 && o.failStatus != 503 {
		errs = append(errs, fmt.Errorf("--fail-status: want 500 or 503, got %d", o.failStatus))
	}
	for name, f := range map[string]float64{"--fail-fraction": o.failFraction, "--drop-events-fraction": o.dropEvents} {
		if f < 0 || f > 1 {
			errs = append(errs, fmt.Errorf("%s: want 0..1, got %v", name, f))
		}
	}
	if o.jitter < 0 {
		errs = append(errs, fmt.Errorf("--jitter: must be >= 0"))
	}
	if o.model == "" {
		errs = append(errs, fmt.Errorf("--model: must not be empty"))
	}
	return errors.Join(errs...)
}

// loraNames splits --lora-adapters.
func (o options) loraNames() map[string]bool {
	out := map[string]bool{}
	for _, n := range strings.Split(o.loraAdapters, ",") {
		if n = strings.TrimSpace(n); n != "" && n != o.model {
			out[n] = true
		}
	}
	return out
}

// engineFlags hold the engine flag values before layering.
type engineFlags struct {
	blockSize, numBlocks, maxBatched, maxSeqs, maxLoRAs, maxModelLen, defaultMaxTokens *int
	prefillRate                                                                        *float64
	decodeCost, stepOverhead                                                           *time.Duration
	seed                                                                               *int64
}

func bindEngineFlags(fs *flag.FlagSet) engineFlags {
	d := engine.DefaultConfig()
	return engineFlags{
		blockSize:        fs.Int("block-size", d.BlockSize, "tokens per KV block"),
		numBlocks:        fs.Int("num-gpu-blocks", d.NumGPUBlocks, "KV cache capacity in blocks"),
		maxBatched:       fs.Int("max-num-batched-tokens", d.MaxNumBatchedTokens, "token budget of one step"),
		maxSeqs:          fs.Int("max-num-seqs", d.MaxNumSeqs, "maximum running requests"),
		maxLoRAs:         fs.Int("max-loras", d.MaxLoRAs, "maximum distinct LoRA adapters running at once (0 = unlimited)"),
		maxModelLen:      fs.Int("max-model-len", d.MaxModelLen, "maximum prompt+output tokens (0 = KV capacity)"),
		defaultMaxTokens: fs.Int("default-max-tokens", d.DefaultMaxTokens, "output tokens when max_tokens is unset"),
		prefillRate:      fs.Float64("prefill-rate", d.PrefillTokensPerSec, "prefill throughput, tokens/s"),
		decodeCost:       fs.Duration("decode-cost", d.DecodeCostPerSeq, "step time added per decoding request"),
		stepOverhead:     fs.Duration("step-overhead", d.StepOverhead, "fixed step time"),
		seed:             fs.Int64("seed", d.Seed, "seed for generated tokens and injected faults"),
	}
}

// config layers defaults, the profile file and the flags set explicitly.
func (f engineFlags) config(fs *flag.FlagSet, profile string) (engine.Config, error) {
	cfg := engine.DefaultConfig()
	if profile != "" {
		var err error
		if cfg, err = engine.LoadProfile(cfg, profile); err != nil {
			return cfg, err
		}
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "block-size":
			cfg.BlockSize = *f.blockSize
		case "num-gpu-blocks":
			cfg.NumGPUBlocks = *f.numBlocks
		case "max-num-batched-tokens":
			cfg.MaxNumBatchedTokens = *f.maxBatched
		case "max-num-seqs":
			cfg.MaxNumSeqs = *f.maxSeqs
		case "max-loras":
			cfg.MaxLoRAs = *f.maxLoRAs
		case "max-model-len":
			cfg.MaxModelLen = *f.maxModelLen
		case "default-max-tokens":
			cfg.DefaultMaxTokens = *f.defaultMaxTokens
		case "prefill-rate":
			cfg.PrefillTokensPerSec = *f.prefillRate
		case "decode-cost":
			cfg.DecodeCostPerSeq = *f.decodeCost
		case "step-overhead":
			cfg.StepOverhead = *f.stepOverhead
		case "seed":
			cfg.Seed = *f.seed
		}
	})
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("engine settings: %w", err)
	}
	return cfg, nil
}
