// Package endpoints owns the candidate set: the model-server endpoints a pool
// routes to, their static description (address, labels, engine, models,
// capacity) and their latest scraped load. Readers take an immutable Snapshot;
// writers (the file watcher, the controller, the scraper) never block them.
package endpoints

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Capacity is what an endpoint can hold; zero fields are unknown.
type Capacity struct {
	// BlockSize is the KV block size in tokens.
	BlockSize int `json:"blockSize,omitempty"`
	// TotalBlocks is the number of KV blocks (GPU).
	TotalBlocks int `json:"totalBlocks,omitempty"`
	// MaxBatchedTokens is the engine's per-step token budget (vLLM max_num_batched_tokens).
	MaxBatchedTokens int `json:"maxBatchedTokens,omitempty"`
}

// Endpoint is one model-server port.
type Endpoint struct {
	Name    string            `json:"name"`
	Address string            `json:"address"`
	Port    int               `json:"port"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Engine selects the metrics mapping and page: vllm (default), sglang, trtllm (also spelled trtllm-serve),
	// triton (also triton-tensorrt-llm).
	Engine string `json:"engine,omitempty"`
	// Models served; empty serves any model.
	Models []string `json:"models,omitempty"`
	// LoRAAdapters this endpoint can serve.
	LoRAAdapters []string `json:"loraAdapters,omitempty"`
	Capacity     Capacity `json:"capacity,omitempty"`
	// WorkerID is the Dynamo worker instance id (an unsigned 64-bit integer, as Dynamo's frontend parses it),
	// sent as x-worker-instance-id with router.workerHeaders; empty when unknown.
	WorkerID WorkerID `json:"workerId,omitempty"`
	// DPRank is the data-parallel rank, sent as x-dp-rank and x-data-parallel-rank with router.workerHeaders;
	// its KV events are read at kv.eventsPort + DPRank.
	DPRank *int `json:"dpRank,omitempty"`
	// MetricsPort serves the metrics page (default Port).
	MetricsPort int `json:"metricsPort,omitempty"`
	// MetricsPath is the metrics page (default: the engine's, scrape.enginePaths or scrape.path).
	MetricsPath string `json:"metricsPath,omitempty"`
	// KVEvents is the ZMQ publisher to subscribe to (default tcp://Address:<kv.eventsPort>).
	KVEvents string `json:"kvEvents,omitempty"`
	// KVEventsReplay is the replay ROUTER endpoint, if any.
	KVEventsReplay string `json:"kvEventsReplay,omitempty"`
}

// engineAliases maps the engine names of the ecosystem's engine-type label
// (llm-d.ai/engine-type) onto kvpick's.
var engineAliases = map[string]string{"trtllm-serve": "trtllm", "triton-tensorrt-llm": "triton"}

// Key is the endpoint's identity and routing target, "ip:port".
func (e *Endpoint) Key() string { return net.JoinHostPort(e.Address, strconv.Itoa(e.Port)) }

// Serves reports whether the endpoint serves model (and adapter, when non-empty).
func (e *Endpoint) Serves(model, adapter string) bool {
	if adapter != "" {
		return slices.Contains(e.LoRAAdapters, adapter)
	}
	return len(e.Models) == 0 || slices.Contains(e.Models, model)
}

func (e *Endpoint) validate() error {
	var errs []error
	if net.ParseIP(e.Address) == nil {
		errs = append(errs, fmt.Errorf("address %q is not an IP address", e.Address))
	}
	if e.Port < 1 || e.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", e.Port))
	}
	switch e.Engine {
	case "", "vllm", "sglang", "trtllm", "triton", "trtllm-serve", "triton-tensorrt-llm":
	default:
		errs = append(errs, fmt.Errorf("engine %q unknown (vllm, sglang, trtllm, triton)", e.Engine))
	}
	if e.MetricsPath != "" && !strings.HasPrefix(e.MetricsPath, "/") {
		errs = append(errs, fmt.Errorf("metricsPath %q must start with /", e.MetricsPath))
	}
	if err := e.WorkerID.Validate(); err != nil {
		errs = append(errs, err)
	}
	if e.DPRank != nil && (*e.DPRank < 0 || *e.DPRank > 1023) {
		errs = append(errs, fmt.Errorf("dpRank %d out of range [0, 1023]", *e.DPRank))
	}
	if e.Capacity.BlockSize < 0 || e.Capacity.TotalBlocks < 0 || e.Capacity.MaxBatchedTokens < 0 {
		errs = append(errs, errors.New("capacity fields must not be negative"))
	}
	return errors.Join(errs...)
}

func (e *Endpoint) setDefaults() {
	if e.Engine == "" {
		e.Engine = "vllm"
	}
	if alias, ok := engineAliases[e.Engine]; ok {
		e.Engine = alias
	}
	if e.Name == "" {
		e.Name = e.Key()
	}
	if e.MetricsPort == 0 {
		e.MetricsPort = e.Port
	}
}

// Load is the latest scraped state of an endpoint.
type Load struct {
	Waiting, Running int
	KVUsage          float64
	// Capacity reported by the engine (used when the endpoint's own is unknown).
	BlockSize, TotalBlocks int
	RunningLoRA            []string
	MaxLoRA                int
	At                     time.Time
	// Fresh: a sample exists and is not stale; load signals are trusted.
	Fresh bool
	// Excluded: the endpoint failed too many scrapes and is not a candidate.
	Excluded bool
	Reason   string
}

// Entry is an endpoint in a Snapshot plus its live load. Safe for concurrent use.
type Entry struct {
	Endpoint
	key  string
	pos  int // index in its snapshot's List
	load atomic.Pointer[Load]
}

// Key is the cached "ip:port".
func (e *Entry) Key() string { return e.key }

// Load returns the latest load (zero Load when never scraped).
func (e *Entry) Load() Load {
	if l := e.load.Load(); l != nil {
		return *l
	}
	return Load{}
}

// Capacity merges configured capacity with what the engine reported; configured wins.
func (e *Entry) Capacity() Capacity {
	c := e.Endpoint.Capacity
	if l := e.load.Load(); l != nil {
		if c.BlockSize == 0 {
			c.BlockSize = l.BlockSize
		}
		if c.TotalBlocks == 0 {
			c.TotalBlocks = l.TotalBlocks
		}
	}
	return c
}
