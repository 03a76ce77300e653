package v1alpha1

// Plugin names a custom profile may use.
const (
	FilterModel  = "model"  // endpoints serving the request's model / LoRA adapter
	FilterSubset = "subset" // the proxy's subset hint
	FilterHealth = "health" // drop excluded (failing) endpoints
	FilterBusy   = "busy"   // router.busy thresholds

	ScorerKVOverlap      = "kv-overlap"       // share of the prompt's blocks cached
	ScorerPrefillTokens  = "prefill-tokens"   // active prefill tokens (fewer is better)
	ScorerDecodeBlocks   = "decode-blocks"    // active decode blocks (fewer is better)
	ScorerQueueDepth     = "queue-depth"      // engine waiting requests (fewer is better)
	ScorerKVUtilization  = "kv-utilization"   // engine KV usage (lower is better)
	ScorerActiveRequests = "active-requests"  // requests in flight (fewer is better)
	ScorerLoRAAffinity   = "lora-affinity"    // adapter already loaded
	ScorerSession        = "session-affinity" // the session's pinned endpoint
	ScorerKVCost         = "kv-cost"          // the kv cost model as a score

	PickerLowestCost = "lowest-cost"
	PickerMaxScore   = "max-score"
	PickerSoftmax    = "softmax"
	PickerRandom     = "random"
	PickerRoundRobin = "round-robin"
)

// FilterNames, ScorerNames and PickerNames list the valid plugin names.
var (
	FilterNames = []string{FilterModel, FilterSubset, FilterHealth, FilterBusy}
	ScorerNames = []string{ScorerKVOverlap, ScorerPrefillTokens, ScorerDecodeBlocks, ScorerQueueDepth,
		ScorerKVUtilization, ScorerActiveRequests, ScorerLoRAAffinity, ScorerSession, ScorerKVCost}
	PickerNames = []string{PickerLowestCost, PickerMaxScore, PickerSoftmax, PickerRandom, PickerRoundRobin}
)
