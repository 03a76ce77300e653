package engine

import (
	"slices"
	"time"
)

// Update is what one step did to one request, for delivery to its client.
type Update struct {
	ID string
	// Token is the token sampled in this step when HasToken is set; First
	// marks the request's first output token (its prefill finished).
	Token    uint32
	HasToken bool
	First    bool
	// Finished: the request produced its last token and left the engine.
	Finished bool
	// Preempted: the request lost its blocks and went back to the waiting
	// queue; it will recompute and continue.
	Preempted    bool
	PromptTokens int
	CachedTokens int // prompt tokens served from the prefix cache
	OutputTokens int // generated so far
}

// StepResult describes one step.
type StepResult struct {
	Duration      time.Duration // see Engine.stepDuration
	PrefillTokens int           // prompt (or recomputed) tokens computed
	DecodeSeqs    int           // requests that decoded one token
	Scheduled     int           // requests that ran in the step
	Updates       []Update
}

type chunk struct {
	s *seq
	n int
}

// Step runs one engine step starting at now: it schedules the running
// requests (decodes and prefill continuations) first, then admits waiting
// requests into the remaining token and sequence budgets, computes the step
// duration and applies its effects. Updates and KV events are stamped with
// the step's end, now+Duration. Step on an idle engine returns a zero result.
//
// A virtual-time caller steps at now, advances its clock to now+Duration,
// delivers the updates, adds arrivals up to the new time and steps again
// while the engine is not Idle.
func (e *Engine) Step(now time.Time) StepResult {
	var res StepResult
	if e.Idle() {
		return res
	}
	e.stats.steps++
	budget := e.cfg.MaxNumBatchedTokens
	plan, budget, preempted := e.scheduleRunning(nil, budget, &res)
	if !preempted {
		plan = e.scheduleWaiting(plan, budget)
	}
	for _, c := range plan {
		if c.n == 1 && c.s.outputs > 0 {
			res.DecodeSeqs++
		} else {
			res.PrefillTokens += c.n
		}
	}
	res.Scheduled = len(plan)
	res.Updates = slices.Grow(res.Updates, len(plan))
	res.Duration = e.stepDuration(plan)
	for _, c := range plan {
		e.execute(c, &res)
	}
	e.dropFinished()
	e.log.flush(e.sink, now.Add(res.Duration))
	return res
}

// stepDuration is what a real engine charges for plan: a fixed overhead, per
// decoding request a fixed cost plus the KV reads of the context it holds,
// and for prefill chunks the tokens at the prefill rate, each token's cost
// growing with its position (causal attention reads every earlier token).
// Computed before the plan executes, so each chunk's start is s.computed.
func (e *Engine) stepDuration(plan []chunk) time.Duration {
	c := &e.cfg
	d := c.StepOverhead
	var prefill float64 // prefill work in short-prompt token equivalents
	for _, ch := range plan {
		if ch.n == 1 && ch.s.outputs > 0 {
			d += c.DecodeCostPerSeq + time.Duration(ch.s.computed)*c.DecodeCostPerContextToken
			continue
		}
		prefill += c.prefillWork(ch.s.computed, ch.n)
	}
	return d + time.Duration(prefill/c.PrefillTokensPerSec*float64(time.Second))
}

// prefillWork is the cost of computing positions [start, start+n) in
// short-prompt token equivalents: a token at position p costs
// 1 + 2p/AttentionLen, so a whole prompt of L tokens costs L*(1 + L/AttentionLen).
func (c *Config) prefillWork(start, n int) float64 {
	w := float64(n)
	if c.AttentionLen > 0 {
		s, e := float64(start), float64(start+n)
		w += (e*e - s*s) / float64(c.AttentionLen)
	}
	return w
}

// scheduleRunning gives each running request its next chunk (one token when
// decoding), preempting from the back of the queue when blocks run out.
func (e *Engine) scheduleRunning(plan []chunk, budget int, res *StepResult) ([]chunk, int, bool) {
	preempted := false
	for i := 0; i < len(e.running) && budget > 0; i++ {
		s := e.running[i]
		n := min(s.remaining(), budget)
		for !e.grow(s, s.computed+n) {
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(victim, res)
			preempted = true
			if victim == s {
				return plan, budget, preempted
			}
		}
		e.cacheScheduled(s, n)
		plan = append(plan, chunk{s, n})
		budget -= n
	}
	return plan, budget, preempted
}

// grow allocates blocks so s can hold upto tokens; false if the pool is short.
func (e *Engine) grow(s *seq, upto int) bool {
	need := blocksFor(upto, e.cfg.BlockSize) - len(s.blocks)
	if need <= 0 {
		return true
	}
	if need > e.kv.numFree {
		return false
	}
	s.blocks = e.kv.allocate(need, s.blocks)
	return true
}

func blocksFor(tokens, bs int) int { return (tokens + bs - 1) / bs }

// preempt frees a running request's blocks and requeues it at the front of
// the waiting queue to be recomputed (vLLM's recompute preemption).
func (e *Engine) preempt(s *seq, res *StepResult) {
	e.stopRunning(s)
	s.computed, s.committed = 0, 0
	e.waiting = append([]*seq{s}, e.waiting...)
	e.stats.preemptions++
	res.Updates = append(res.Updates, Update{ID: s.id, Preempted: true, PromptTokens: s.promptLen,
		CachedTokens: s.cached, OutputTokens: s.outputs})
}

// stopRunning releases s's blocks and LoRA slot; the caller unlinks it.
func (e *Engine) stopRunning(s *seq) {
	e.kv.release(s.blocks)
	s.blocks = s.blocks[:0]
	s.running = false
	if s.lora != "" {
		if e.loras[s.lora]--; e.loras[s.lora] <= 0 {
			delete(e.loras, s.lora)
		}
	}
}
