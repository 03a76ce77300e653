package scrape

import "fmt"

// handler folds one sample line of a metric into the accumulator.
type handler func(a *accum, ls labelSet, v float64)

// mapping is one engine's metric vocabulary.
type mapping struct {
	handlers                 map[string]handler
	waitingName, runningName string // for "metric X not found"
}

func waiting(a *accum, _ labelSet, v float64)     { a.addWaiting(v) }
func running(a *accum, _ labelSet, v float64)     { a.addRunning(v) }
func kvUsage(a *accum, _ labelSet, v float64)     { a.maxKV(v) }
func blockSize(a *accum, _ labelSet, v float64)   { a.blockSize = max(a.blockSize, v) }
func totalBlocks(a *accum, _ labelSet, v float64) { a.totalBlocks = max(a.totalBlocks, v) }

var vllmMapping = &mapping{
	handlers: map[string]handler{
		"vllm:num_requests_waiting": waiting,
		"vllm:num_requests_running": running,
		"vllm:kv_cache_usage_perc":  kvUsage,
		// vLLM v0 name, used only when the v1 name is absent.
		"vllm:gpu_cache_usage_perc": func(a *accum, _ labelSet, v float64) { a.maxKVFallback(v) },
		"vllm:cache_config_info": func(a *accum, ls labelSet, _ float64) {
			a.capacityFromLabels(ls, "block_size", "num_gpu_blocks")
		},
		"vllm:lora_requests_info":         func(a *accum, ls labelSet, v float64) { a.offerLoRA(ls, v) },
		"vllm:prefix_cache_queries_total": func(a *accum, _ labelSet, v float64) { a.prefixQueries += v },
		"vllm:prefix_cache_hits_total":    func(a *accum, _ labelSet, v float64) { a.prefixHit += v },
	},
	waitingName: "vllm:num_requests_waiting",
	runningName: "vllm:num_requests_running",
}

var sglangMapping = &mapping{
	handlers: map[string]handler{
		"sglang:num_queue_reqs":   waiting,
		"sglang:num_running_reqs": running,
		"sglang:token_usage":      kvUsage,
		// up to v0.5.11 an info metric; from v0.5.12 plain gauges (one series per rank: max)
		"sglang:cache_config_info": func(a *accum, ls labelSet, _ float64) {
			a.capacityFromLabels(ls, "page_size", "num_pages")
		},
		"sglang:page_size": blockSize,
		"sglang:num_pages": totalBlocks,
	},
	waitingName: "sglang:num_queue_reqs",
	runningName: "sglang:num_running_reqs",
}

var trtllmMapping = &mapping{
	handlers: map[string]handler{
		"trtllm_num_requests_waiting":      waiting,
		"trtllm_num_requests_running":      running,
		"trtllm_kv_cache_utilization":      kvUsage,
		"trtllm_kv_cache_tokens_per_block": blockSize,
		"trtllm_kv_cache_max_blocks":       totalBlocks,
	},
	waitingName: "trtllm_num_requests_waiting",
	runningName: "trtllm_num_requests_running",
}

var tritonMapping = &mapping{
	handlers: map[string]handler{
		"nv_trt_llm_request_metrics":        tritonRequests,
		"nv_trt_llm_kv_cache_block_metrics": tritonBlocks,
	},
	waitingName: `nv_trt_llm_request_metrics{request_type="waiting"}`,
	runningName: `nv_trt_llm_request_metrics{request_type="scheduled"}`,
}

func tritonRequests(a *accum, ls labelSet, v float64) {
	typ, _ := ls.get("request_type")
	switch string(typ) {
	case "waiting":
		a.addWaiting(v)
	case "scheduled":
		a.addRunning(v)
	}
}

func tritonBlocks(a *accum, ls labelSet, v float64) {
	typ, _ := ls.get("kv_cache_block_type")
	switch string(typ) {
	case "fraction":
		a.maxKV(v)
	case "tokens_per":
		blockSize(a, ls, v)
	case "max":
		totalBlocks(a, ls, v)
	case "used":
		a.kvUsedBlocks = max(a.kvUsedBlocks, v)
	}
}

// mappingFor returns the vocabulary of engine; "" means vLLM.
func mappingFor(e Engine) (*mapping, error) {
	switch e {
	case EngineVLLM, "":
		return vllmMapping, nil
	case EngineSGLang:
		return sglangMapping, nil
	case EngineTRTLLM:
		return trtllmMapping, nil
	case EngineTriton:
		return tritonMapping, nil
	}
	return nil, fmt.Errorf("unknown engine %q", e)
}

// ValidEngine reports whether e names a supported engine ("" counts as vLLM).
func ValidEngine(e Engine) bool {
	_, err := mappingFor(e)
	return err == nil
}
