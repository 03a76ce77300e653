package engine

// execute applies one scheduled chunk: its tokens become computed (its full
// blocks entered the prefix cache when it was scheduled, see cacheScheduled),
// and a request whose sequence is fully computed samples its next token.
func (e *Engine) execute(c chunk, res *StepResult) {
	s := c.s
	if s.outputs == 0 || c.n > 1 {
		e.stats.promptTokens += int64(c.n)
	}
	s.computed += c.n
	if s.computed < len(s.tokens) {
		return
	}
	tok := s.nextToken(e.vocab)
	s.tokens = append(s.tokens, tok)
	s.outputs++
	e.stats.genTokens++
	u := Update{ID: s.id, Token: tok, HasToken: true, First: s.outputs == 1,
		PromptTokens: s.promptLen, CachedTokens: s.cached, OutputTokens: s.outputs}
	if s.outputs >= s.maxTokens {
		u.Finished = true
	}
	res.Updates = append(res.Updates, u)
}

// cacheScheduled hands the full blocks of s's chunk of n tokens, scheduled
// this step, to the prefix cache and reports them as BlockStored events, one
// per run of consecutive new blocks. vLLM does the same at scheduling time
// (KVCacheManager.allocate_slots caches up to computed + new tokens), so a
// request admitted later in the same step hits blocks this step computes:
// within each layer the step writes every sequence's KV before attention
// reads it. Caching only after the step made a request admitted beside the
// one computing its prefix compute that prefix again.
func (e *Engine) cacheScheduled(s *seq, n int) {
	bs := e.cfg.BlockSize
	full := (s.computed + n) / bs
	if full <= s.committed {
		return
	}
	s.extendHashes(e.cfg.HashSeed, bs)
	start := -1
	for i := s.committed; i < full; i++ {
		if e.kv.commit(s.blocks[i], s.hashes[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		e.emitStored(s, start, i)
		start = -1
	}
	e.emitStored(s, start, full)
	s.committed = full
}

// emitStored reports blocks [from, to) of s as stored (from < 0: none). The
// event shares s's hashes and tokens rather than copying them: the engine only
// ever appends to both, and the capped slices keep a sink's appends off them.
func (e *Engine) emitStored(s *seq, from, to int) {
	if from < 0 || from >= to {
		return
	}
	bs := e.cfg.BlockSize
	ev := KVEvent{Kind: BlockStored, BlockSize: bs, LoRA: s.lora,
		Hashes: s.hashes[from:to:to], Tokens: s.tokens[from*bs : to*bs : to*bs]}
	if from > 0 {
		ev.Parent, ev.HasParent = s.hashes[from-1], true
	}
	e.log.add(ev)
}

// dropFinished removes requests that produced their last token.
func (e *Engine) dropFinished() {
	kept := e.running[:0]
	for _, s := range e.running {
		if s.outputs >= s.maxTokens {
			e.stopRunning(s)
			delete(e.byID, s.id)
			continue
		}
		kept = append(kept, s)
	}
	clear(e.running[len(kept):])
	e.running = kept
}
