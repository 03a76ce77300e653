package engine

// scheduleWaiting admits waiting requests in FIFO order while the token
// budget, MaxNumSeqs and free blocks allow. A request whose LoRA adapter
// cannot be loaded (MaxLoRAs distinct adapters already running) is skipped
// and keeps its place; running out of blocks stops admission.
func (e *Engine) scheduleWaiting(plan []chunk, budget int) []chunk {
	i, kept := 0, 0
	for ; i < len(e.waiting) && budget > 0 && len(e.running) < e.cfg.MaxNumSeqs; i++ {
		s := e.waiting[i]
		if e.loraBlocked(s.lora) {
			e.waiting[kept] = s
			kept++
			continue
		}
		n, ok := e.admit(s, budget)
		if !ok {
			break
		}
		e.cacheScheduled(s, n)
		plan = append(plan, chunk{s, n})
		budget -= n
	}
	// Skipped requests keep their order ahead of the ones never examined.
	rest := copy(e.waiting[kept:], e.waiting[i:])
	clear(e.waiting[kept+rest:])
	e.waiting = e.waiting[:kept+rest]
	return plan
}

func (e *Engine) loraBlocked(lora string) bool {
	if lora == "" || e.cfg.MaxLoRAs == 0 || e.loras[lora] > 0 {
		return false
	}
	return len(e.loras) >= e.cfg.MaxLoRAs
}

// admit looks up s's cached prefix, takes its blocks plus fresh ones for the
// first chunk, and moves s to running. It returns the chunk size, or false
// (changing nothing) when the pool cannot hold the chunk.
func (e *Engine) admit(s *seq, budget int) (int, bool) {
	bs := e.cfg.BlockSize
	s.extendHashes(e.cfg.HashSeed, bs)
	// At least one token must be computed to produce logits, so a fully
	// cached sequence recomputes its last block.
	maxHit := (len(s.tokens) - 1) / bs
	hit := e.kv.lookup(s.hashes[:maxHit], e.scratch[:0])
	e.scratch = hit
	hitTokens := len(hit) * bs
	n := min(len(s.tokens)-hitTokens, budget)
	need := blocksFor(hitTokens+n, bs) - len(hit)
	if need > e.kv.numFree-e.kv.freeAmong(hit) {
		return 0, false
	}
	e.kv.acquire(hit)
	s.blocks = append(s.blocks[:0], hit...)
	s.blocks = e.kv.allocate(need, s.blocks)
	s.computed, s.committed = hitTokens, len(hit)
	if !s.scheduled {
		s.scheduled, s.cached = true, min(hitTokens, s.promptLen)
	}
	e.stats.prefixQueries += int64(len(s.tokens))
	e.stats.prefixHits += int64(hitTokens)
	s.running = true
	e.running = append(e.running, s)
	if s.lora != "" {
		e.loras[s.lora]++
	}
	return n, true
}
