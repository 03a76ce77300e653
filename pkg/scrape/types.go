// Package scrape polls model servers' Prometheus /metrics pages, maps each
// engine's metric names onto one typed Sample and tracks how fresh each
// endpoint's sample is. Endpoint state owners receive every result through a
// Sink; nothing here decides routing.
package scrape

import (
	"errors"
	"fmt"
	"time"
)

// Engine names the model-server family whose metric names a page uses.
type Engine string

// Known engines. The empty Engine means EngineVLLM.
const (
	EngineVLLM   Engine = "vllm"
	EngineSGLang Engine = "sglang"
	EngineTRTLLM Engine = "trtllm" // TensorRT-LLM `trtllm-serve`
	EngineTriton Engine = "triton" // Triton with the TensorRT-LLM backend
)

// Target is one endpoint to poll.
type Target struct {
	Key    string // endpoint key, "ip:port"
	URL    string // full metrics URL, e.g. http://10.0.0.1:8000/metrics
	Engine Engine
}

// Sample is one scrape of one endpoint, in engine-neutral terms. Slices are
// never modified after the Sample is published; treat them as read-only.
type Sample struct {
	Waiting, Running int
	KVUsage          float64 // 0..1, clamped
	// Capacity; 0 when the page does not say (unknown, not empty).
	BlockSize, TotalBlocks   int
	MaxLoRA                  int
	RunningLoRA, WaitingLoRA []string
	// vLLM prefix-cache counters (tokens), 0 when absent.
	PrefixCacheQueries, PrefixCacheHits float64
	ScrapedAt                           time.Time
}

// Status is what the scraper knows about one endpoint after an attempt.
type Status struct {
	Sample              Sample // the last good sample, kept across failures
	HasSample           bool
	LastError           string // empty after a success
	ConsecutiveFailures int
	// Stale: no sample yet, or the sample is older than Options.StaleAfter;
	// its load signals must not be trusted.
	Stale bool
	// Excluded: ConsecutiveFailures >= Options.ExcludeAfter.
	Excluded bool
}

// Sink receives the status after every scrape attempt. Calls for one key are
// serialised; calls for different keys may run concurrently. UpdateScrape must
// not call Scraper.SetTargets (SetTargets waits for in-flight calls).
type Sink interface {
	UpdateScrape(key string, st Status)
}

// ErrMetricNotFound matches (errors.Is) a page that lacks a required metric.
var ErrMetricNotFound = errors.New("metric not found")

// MetricNotFoundError names the required metric a page lacks.
type MetricNotFoundError struct{ Metric string }

func (e *MetricNotFoundError) Error() string { return fmt.Sprintf("metric %s not found", e.Metric) }

// Is makes errors.Is(err, ErrMetricNotFound) true.
func (e *MetricNotFoundError) Is(target error) bool { return target == ErrMetricNotFound }
