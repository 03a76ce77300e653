// Package engine models an LLM model server (vLLM-style continuous batching
// with chunked prefill, a block KV cache with prefix caching, LRU eviction and
// preemption) as a pure state machine driven by the caller's clock. modelsim
// steps it in real time; routebench steps it in virtual time.
package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Errors Add returns; callers branch on them with errors.Is.
var (
	ErrEmptyPrompt = errors.New("engine: empty prompt")
	ErrTooLong     = errors.New("engine: prompt plus output exceeds the model length")
	ErrDuplicateID = errors.New("engine: duplicate request id")
)

// Request is one generation request. The engine copies Tokens.
type Request struct {
	ID        string
	Tokens    []uint32
	MaxTokens int // output tokens to generate; 0 = Config.DefaultMaxTokens
	LoRA      string
	Arrival   time.Time
}

// Engine is the model-server state machine. It is not safe for concurrent
// use: the caller serialises Add, Step, Abort, ResetCache and Stats.
type Engine struct {
	cfg     Config
	sink    KVSink
	log     eventLog
	kv      *kvCache
	byID    map[string]*seq
	running []*seq
	waiting []*seq // FIFO; preempted requests go back to the front
	loras   map[string]int
	stats   counters
	scratch []int32
	vocab   []uint32
}

// counters are the engine's cumulative statistics.
type counters struct {
	prefixQueries, prefixHits int64
	preemptions, steps        int64
	promptTokens, genTokens   int64
}

// New builds an engine; cfg must be valid (see Config.Validate). sink may be
// nil when KV events are not wanted.
func New(cfg Config, sink KVSink) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{cfg: cfg, sink: sink, byID: make(map[string]*seq), loras: make(map[string]int)}
	e.kv = newKVCache(cfg.NumGPUBlocks, &e.log)
	return e, nil
}

// SetOutputVocab makes generated tokens be drawn from ids (deterministically,
// as before) instead of [0, 32000); modelsim passes ids whose text it can
// render. ids must not be modified afterwards; nil restores the default.
func (e *Engine) SetOutputVocab(ids []uint32) { e.vocab = ids }

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Add queues a request. It returns ErrEmptyPrompt, ErrTooLong or
// ErrDuplicateID (wrapped) and leaves the engine unchanged on error.
func (e *Engine) Add(r *Request) error {
	if len(r.Tokens) == 0 {
		return fmt.Errorf("request %q: %w", r.ID, ErrEmptyPrompt)
	}
	if _, dup := e.byID[r.ID]; dup {
		return fmt.Errorf("request %q: %w", r.ID, ErrDuplicateID)
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = e.cfg.DefaultMaxTokens
	}
	// The last output token is never fed back, so it needs no KV slot.
	if n := len(r.Tokens) + maxTokens - 1; n > e.cfg.maxLen() {
		return fmt.Errorf("request %q: %d tokens, limit %d: %w", r.ID, n+1, e.cfg.maxLen(), ErrTooLong)
	}
	s := newSeq(r, maxTokens, e.cfg)
	e.byID[r.ID] = s
	e.waiting = append(e.waiting, s)
	return nil
}

// Abort removes a request wherever it is and frees its blocks. It reports
// whether the request was known.
func (e *Engine) Abort(id string) bool {
	s, ok := e.byID[id]
	if !ok {
		return false
	}
	if s.running {
		e.running = removeSeq(e.running, s)
		e.stopRunning(s)
	} else {
		e.waiting = removeSeq(e.waiting, s)
	}
	delete(e.byID, id)
	return true
}

func removeSeq(list []*seq, s *seq) []*seq {
	for i, x := range list {
		if x == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// ResetCache forgets every cached prefix (vLLM's reset_prefix_cache) and
// reports AllBlocksCleared to the sink, stamped now. Running requests keep
// their blocks.
func (e *Engine) ResetCache(now time.Time) {
	e.kv.reset()
	e.log.add(KVEvent{Kind: AllBlocksCleared})
	e.log.flush(e.sink, now)
}

// Idle reports whether nothing is running or waiting.
func (e *Engine) Idle() bool { return len(e.running) == 0 && len(e.waiting) == 0 }

// Stats is a snapshot of the engine's load and cumulative counters.
type Stats struct {
	Running, Waiting    int
	UsedBlocks          int
	KVUsage             float64 // used blocks / total, 0..1
	PrefixQueries       int64   // prompt tokens looked up in the prefix cache
	PrefixHits          int64   // of which were cached
	Preemptions, Steps  int64
	PromptTokens        int64 // prompt tokens computed (not cached)
	GenerationTokens    int64
	RunningLoRAs        []string
	WaitingLoRAs        []string
	NumGPUBlocks        int
	BlockSize, MaxLoRAs int
}

// Stats returns a snapshot; RunningLoRAs is sorted, WaitingLoRAs is in queue
// order.
func (e *Engine) Stats() Stats {
	st := Stats{
		Running: len(e.running), Waiting: len(e.waiting), UsedBlocks: e.kv.used(),
		PrefixQueries: e.stats.prefixQueries, PrefixHits: e.stats.prefixHits,
		Preemptions: e.stats.preemptions, Steps: e.stats.steps,
		PromptTokens: e.stats.promptTokens, GenerationTokens: e.stats.genTokens,
		NumGPUBlocks: e.cfg.NumGPUBlocks, BlockSize: e.cfg.BlockSize, MaxLoRAs: e.cfg.MaxLoRAs,
	}
	st.KVUsage = float64(st.UsedBlocks) / float64(e.cfg.NumGPUBlocks)
	for name := range e.loras {
		st.RunningLoRAs = append(st.RunningLoRAs, name)
	}
	slices.Sort(st.RunningLoRAs)
	seen := map[string]bool{}
	for _, s := range e.waiting {
		if s.lora != "" && !seen[s.lora] {
			seen[s.lora] = true
			st.WaitingLoRAs = append(st.WaitingLoRAs, s.lora)
		}
	}
	return st
}
