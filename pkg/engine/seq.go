package engine

// seq is the engine's state for one request.
type seq struct {
	id        string
	lora      string
	loraHash  uint64
	tokens    []uint32 // prompt then generated tokens
	promptLen int
	maxTokens int
	outputs   int
	computed  int      // tokens whose KV is computed
	blocks    []int32  // block table
	hashes    []uint64 // engine hashes of the full blocks of tokens
	committed int      // leading blocks already handed to the cache
	cached    int      // prompt tokens found cached when first scheduled
	scheduled bool     // has been scheduled at least once
	running   bool
	outSeed   uint64
}

func newSeq(r *Request, maxTokens int, cfg Config) *seq {
	// Room for typical outputs up front; huge max_tokens grow on demand.
	tokens := make([]uint32, len(r.Tokens), len(r.Tokens)+min(maxTokens, 256))
	copy(tokens, r.Tokens)
	// The block table and hashes get the same room, so neither regrows while
	// the prompt is prefilled block by block.
	full := cap(tokens)/cfg.BlockSize + 1
	s := &seq{id: r.ID, lora: r.LoRA, tokens: tokens, promptLen: len(tokens), maxTokens: maxTokens,
		blocks: make([]int32, 0, full), hashes: make([]uint64, 0, full)}
	if r.LoRA != "" {
		s.loraHash = stringHash(r.LoRA)
	}
	s.outSeed = mix64(uint64(cfg.Seed) ^ tokensHash(r.Tokens) ^ s.loraHash)
	return s
}

// extendHashes hashes every full block of tokens not hashed yet.
func (s *seq) extendHashes(seed uint64, bs int) {
	for i := len(s.hashes); (i+1)*bs <= len(s.tokens); i++ {
		var parent uint64
		if i > 0 {
			parent = s.hashes[i-1]
		}
		s.hashes = append(s.hashes, blockHash(seed, parent, s.loraHash, s.tokens[i*bs:(i+1)*bs]))
	}
}

// nextToken is the deterministic output token number s.outputs, drawn from
// vocab when set.
func (s *seq) nextToken(vocab []uint32) uint32 {
	x := mix64(s.outSeed + uint64(s.outputs))
	if len(vocab) > 0 {
		return vocab[x%uint64(len(vocab))]
	}
	return uint32(x % outputVocab)
}

// outputVocab bounds generated token ids (a Llama-sized vocabulary).
const outputVocab = 32000

// remaining is how many tokens still need their KV computed.
func (s *seq) remaining() int { return len(s.tokens) - s.computed }
