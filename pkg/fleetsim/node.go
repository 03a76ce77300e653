package fleetsim

import (
	"strconv"
	"time"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/request"
)

// node is one simulated endpoint: an engine stepped in virtual time.
type node struct {
	s          *sim
	idx        int
	key        string
	eng        *engine.Engine
	stepping   bool // a step is running or about to start
	updates    []engine.Update
	wantEvents bool
	// prefillDue is the prompt tokens dispatched here without a first token.
	prefillDue int
	maxWaiting int
}

// dispatched notes a new request and starts stepping an idle engine (at the
// end of this instant, so simultaneous dispatches share the step).
func (n *node) dispatched(promptTokens int) {
	n.prefillDue += promptTokens
	if !n.stepping {
		n.stepping = true
		n.s.events.push(event{at: n.s.now, kind: evStepStart, node: n.idx})
	}
}

// startStep runs one engine step now; its results land at its end.
func (n *node) startStep() {
	if n.eng.Idle() {
		n.stepping = false
		return
	}
	res := n.eng.Step(n.s.clock())
	n.checkStep(&res)
	d := res.Duration
	if d <= 0 {
		d = time.Millisecond // never let a step take no time: virtual time must advance
	}
	n.updates = res.Updates
	n.s.events.push(event{at: n.s.now + d, kind: evStepEnd, node: n.idx})
}

func (n *node) checkStep(res *engine.StepResult) {
	c := n.eng.Config()
	if res.Scheduled > c.MaxNumSeqs {
		n.s.check.fail("%s: step ran %d requests, max %d", n.key, res.Scheduled, c.MaxNumSeqs)
	}
	if res.PrefillTokens+res.DecodeSeqs > c.MaxNumBatchedTokens {
		n.s.check.fail("%s: step computed %d tokens, budget %d", n.key, res.PrefillTokens+res.DecodeSeqs, c.MaxNumBatchedTokens)
	}
}

// stepEnd delivers the step's updates to their requests' lifecycles, then
// starts the next step and lets the admission queue look at the freed room.
func (n *node) stepEnd() {
	freed := false
	for _, u := range n.updates {
		freed = n.apply(u) || freed
	}
	n.updates = nil
	n.stepping = false
	if !n.eng.Idle() {
		n.stepping = true
		n.startStep()
	}
	if freed {
		n.s.release()
	}
}

// apply feeds one update into its request's lifecycle; true when it freed
// capacity (first token or finish).
func (n *node) apply(u engine.Update) bool {
	id, err := strconv.Atoi(u.ID)
	if err != nil || id < 0 || id >= len(n.s.fl) || n.s.fl[id] == nil {
		n.s.check.fail("%s: update for unknown request %q", n.key, u.ID)
		return false
	}
	f, rec := n.s.fl[id], &n.s.recs[id]
	if u.Preempted {
		rec.Preemptions++
		return false
	}
	if u.First {
		rec.First = n.s.now
		n.prefillDue -= rec.Prompt
		f.ticket.FirstToken()
	}
	if u.HasToken {
		f.ticket.Progress(u.OutputTokens)
	}
	if !u.Finished {
		return u.First
	}
	f.ticket.Usage(request.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.OutputTokens, CachedTokens: u.CachedTokens})
	f.ticket.Done(nil)
	n.s.finish(id, u)
	return true
}

// scrape publishes the engine's load to the candidate set, as the metrics
// scraper would.
func (n *node) scrape() {
	st := n.eng.Stats()
	n.maxWaiting = max(n.maxWaiting, st.Waiting)
	if st.UsedBlocks > st.NumGPUBlocks {
		n.s.check.fail("%s: %d blocks used of %d", n.key, st.UsedBlocks, st.NumGPUBlocks)
	}
	n.s.set.UpdateLoad(n.key, endpoints.Load{Waiting: st.Waiting, Running: st.Running, KVUsage: st.KVUsage,
		BlockSize: st.BlockSize, TotalBlocks: st.NumGPUBlocks, MaxLoRA: st.MaxLoRAs, Fresh: true, At: n.s.clock()})
}

// kvEvents receives the engine's KV events (stamped with the step's end)
// and schedules their delivery to the picker after the configured delay.
func (n *node) kvEvents(ts time.Time, evs []engine.KVEvent) {
	if !n.wantEvents {
		return
	}
	b := kvevents.Batch{TS: float64(ts.UnixNano()) / 1e9, Events: make([]kvevents.Event, 0, len(evs))}
	for i := range evs {
		b.Events = append(b.Events, convertEvent(&evs[i]))
	}
	n.s.events.push(event{at: ts.Sub(epoch) + n.s.cfg.EventsDelay, kind: evDeliver, node: n.idx, batch: b})
}

func convertEvent(e *engine.KVEvent) kvevents.Event {
	switch e.Kind {
	case engine.BlockStored:
		ev := kvevents.BlockStored{BlockHashes: e.Hashes, TokenIDs: e.Tokens, BlockSize: e.BlockSize, LoRAName: e.LoRA}
		if e.HasParent {
			p := e.Parent
			ev.Parent = &p
		}
		return ev
	case engine.BlockRemoved:
		return kvevents.BlockRemoved{BlockHashes: e.Hashes}
	}
	return kvevents.AllBlocksCleared{}
}
