package scrape

import (
	"math"
	"strconv"
	"strings"
)

// accum folds the series of one page into a Sample: counts of several series
// (e.g. several model_name labels) are summed, usage and capacity take the
// maximum, and the LoRA info series with the newest timestamp wins.
type accum struct {
	waiting, running         float64
	haveWaiting, haveRunning bool
	kv, kvFallback           float64
	haveKV, haveKVFallback   bool
	kvUsedBlocks             float64 // Triton "used", for a fraction fallback
	blockSize, totalBlocks   float64
	prefixQueries, prefixHit float64
	lora                     loraInfo
	haveLoRA                 bool
}

type loraInfo struct {
	ts               float64
	max              float64
	running, waiting string
}

func (a *accum) addWaiting(v float64) { a.waiting += v; a.haveWaiting = true }
func (a *accum) addRunning(v float64) { a.running += v; a.haveRunning = true }

func (a *accum) maxKV(v float64) {
	a.kv = maxOr(a.kv, v, a.haveKV)
	a.haveKV = true
}

func (a *accum) maxKVFallback(v float64) {
	a.kvFallback = maxOr(a.kvFallback, v, a.haveKVFallback)
	a.haveKVFallback = true
}

func maxOr(cur, v float64, have bool) float64 {
	if !have || v > cur {
		return v
	}
	return cur
}

// capacityFromLabels reads block size and block count from an info metric's
// labels; values that are not numbers (vLLM may print "None") stay unknown.
func (a *accum) capacityFromLabels(ls labelSet, blockLabel, countLabel string) {
	if v, ok := labelNumber(ls, blockLabel); ok {
		a.blockSize = math.Max(a.blockSize, v)
	}
	if v, ok := labelNumber(ls, countLabel); ok {
		a.totalBlocks = math.Max(a.totalBlocks, v)
	}
}

// offerLoRA keeps the series whose value (a timestamp) is the newest; on a
// tie the first one seen stays.
func (a *accum) offerLoRA(ls labelSet, ts float64) {
	if a.haveLoRA && ts <= a.lora.ts {
		return
	}
	a.haveLoRA = true
	a.lora = loraInfo{ts: ts}
	a.lora.max, _ = labelNumber(ls, "max_lora")
	if v, ok := ls.get("running_lora_adapters"); ok {
		a.lora.running = string(v)
	}
	if v, ok := ls.get("waiting_lora_adapters"); ok {
		a.lora.waiting = string(v)
	}
}

func labelNumber(ls labelSet, name string) (float64, bool) {
	raw, ok := ls.get(name)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// sample converts the accumulated values; m names the required metrics.
func (a *accum) sample(m *mapping) (Sample, error) {
	if !a.haveWaiting {
		return Sample{}, &MetricNotFoundError{Metric: m.waitingName}
	}
	if !a.haveRunning {
		return Sample{}, &MetricNotFoundError{Metric: m.runningName}
	}
	s := Sample{
		Waiting: toCount(a.waiting), Running: toCount(a.running),
		KVUsage:   clamp01(a.usage()),
		BlockSize: toCount(a.blockSize), TotalBlocks: toCount(a.totalBlocks),
		PrefixCacheQueries: nonNeg(a.prefixQueries), PrefixCacheHits: nonNeg(a.prefixHit),
	}
	if a.haveLoRA {
		s.MaxLoRA = toCount(a.lora.max)
		s.RunningLoRA = splitList(a.lora.running)
		s.WaitingLoRA = splitList(a.lora.waiting)
	}
	return s, nil
}

// usage prefers the engine's own usage metric, then an older name, then a
// ratio of used to total blocks.
func (a *accum) usage() float64 {
	switch {
	case a.haveKV:
		return a.kv
	case a.haveKVFallback:
		return a.kvFallback
	case a.kvUsedBlocks > 0 && a.totalBlocks > 0:
		return a.kvUsedBlocks / a.totalBlocks
	}
	return 0
}

// maxCount bounds counts so that conversion from float never overflows.
const maxCount = 1 << 31

func toCount(v float64) int {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= maxCount:
		return maxCount
	}
	return int(v)
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}

func nonNeg(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return v
}

// splitList splits a comma list, dropping blanks; nil when empty.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
