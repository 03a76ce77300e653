// Package kvevents speaks vLLM/SGLang KV-cache events over ZeroMQ: the wire
// types and their msgpack codec, a Publisher (used by the simulated model
// server) and a Subscriber with sequence-gap replay (used by the picker).
package kvevents

// Batch is one EventBatch as the engine publishes it: every event the engine
// produced during one scheduler step, in order.
type Batch struct {
	// TS is the engine's wall-clock time of the step, in seconds since the epoch.
	TS float64
	// Events in the order the engine applied them.
	Events []Event
	// DPRank is the data-parallel rank that produced the batch (nil when absent).
	DPRank *int
	// Skipped counts events with an unknown tag that Decode dropped; Encode ignores it.
	Skipped int
	// Invalid counts known events Decode dropped because a field was malformed
	// (the rest of the batch is kept); InvalidErr is the first such error.
	// Encode ignores both.
	Invalid    int
	InvalidErr error
}

// Event is one KV-cache event. Decode yields the value types BlockStored,
// BlockRemoved and AllBlocksCleared; Encode also accepts pointers to them.
type Event interface{ isEvent() }

// BlockStored reports full blocks the engine has just cached.
type BlockStored struct {
	// BlockHashes are the engine's hashes of the new blocks, in chain order.
	BlockHashes []uint64
	// Parent is the hash of the block before the first new one (nil at the start of a sequence).
	Parent *uint64
	// TokenIDs cover len(BlockHashes)*BlockSize tokens, in block order.
	TokenIDs []uint32
	// BlockSize is tokens per block.
	BlockSize int
	// LoRAID is the deprecated numeric LoRA id (nil for the base model).
	LoRAID *int
	// Medium is where the blocks live ("GPU", "CPU", ...); "" when absent.
	Medium string
	// LoRAName is the adapter name; "" for the base model.
	LoRAName string
	// ExtraKeys has one entry per block (or is nil): a digest of the engine's
	// per-block extra_keys (cache salt, multimodal hashes, LoRA), 0 for a block
	// without any. Blocks with equal tokens but different keys are different
	// cache entries. Decode fills it from vLLM's extra_keys; Encode writes each
	// non-zero entry as a one-element tuple [digest].
	ExtraKeys []uint64
	// CacheSalt is the prompt's cache salt when the engine states it (SGLang's
	// metadata {cache_salt}); "" when absent.
	CacheSalt string
	// GroupIdx is the KV cache group (hybrid models: full attention, sliding
	// window, Mamba); 0 when absent.
	GroupIdx int
	// SpecKind is vLLM's kv_cache_spec_kind for the group; "" when absent.
	SpecKind string
}

// BlockRemoved reports blocks the engine has evicted.
type BlockRemoved struct {
	// BlockHashes are the evicted blocks' engine hashes.
	BlockHashes []uint64
	// Medium is where the blocks lived; "" when absent.
	Medium string
	// GroupIdx is the KV cache group the blocks belonged to; 0 when absent.
	GroupIdx int
}

// AllBlocksCleared reports that the engine dropped its whole prefix cache.
type AllBlocksCleared struct{}

func (BlockStored) isEvent()      {}
func (BlockRemoved) isEvent()     {}
func (AllBlocksCleared) isEvent() {}

// Event tags as the engines spell them (msgspec class names).
const (
	TagBlockStored      = "BlockStored"
	TagBlockRemoved     = "BlockRemoved"
	TagAllBlocksCleared = "AllBlocksCleared"
)

// EventType returns the wire tag of e, or "unknown".
func EventType(e Event) string {
	switch e.(type) {
	case BlockStored, *BlockStored:
		return TagBlockStored
	case BlockRemoved, *BlockRemoved:
		return TagBlockRemoved
	case AllBlocksCleared, *AllBlocksCleared:
		return TagAllBlocksCleared
	}
	return "unknown"
}

// Encoding selects how Encode lays out structs on the wire.
type Encoding int

const (
	// EncodingArray is msgspec array_like: positional arrays, events tagged by
	// their first element (older vLLM, SGLang).
	EncodingArray Encoding = iota
	// EncodingMap is msgspec maps, events tagged by a "type" key (newer vLLM).
	EncodingMap
	// EncodingMixed is a positional batch holding map events: vLLM v0.2x,
	// whose EventBatch is array_like while its events are not.
	EncodingMixed
)

// String names the encoding as configuration spells it.
func (e Encoding) String() string {
	switch e {
	case EncodingArray:
		return "array"
	case EncodingMap:
		return "map"
	case EncodingMixed:
		return "mixed"
	}
	return "unknown"
}
