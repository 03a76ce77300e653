package kvfeed

import (
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// The unmatched alarm: an endpoint whose events arrive while the blocks of
// the requests routed to it never show up in its view hashes differently
// from the picker (block size, tokenizer, model or adapter seed), so its
// events earn no cache credit and nothing else says so. Each request routed
// to an endpoint on the events path leaves a probe (its first block, hashed
// at that endpoint's block size); once the endpoint has stored blocks after
// the request and kv.unmatchedProbeSettle has passed, the probe is looked
// up, and kv.unmatchedAlarmAfter misses in a row raise the alarm.

// maxProbes bounds the probes an endpoint holds between checks.
const maxProbes = 32

type probe struct {
	hash uint64
	at   int64
}

type probes struct {
	mu      sync.Mutex
	pending []probe
	misses  int
	alarm   bool
}

// Probe notes that a request whose first block (at endpoint's block size)
// hashes to hash was routed to endpoint at now. Only endpoints on the events
// path are probed. Safe for concurrent use.
func (f *Feed) Probe(endpoint string, hash uint64, now time.Time) {
	st := f.st.get(endpoint)
	if st == nil || !f.OnEvents(endpoint) {
		return
	}
	st.probes.mu.Lock()
	if len(st.probes.pending) < maxProbes {
		st.probes.pending = append(st.probes.pending, probe{hash, now.UnixNano()})
	}
	st.probes.mu.Unlock()
}

// checkProbes looks up every settled probe and raises or clears the alarm.
func (f *Feed) checkProbes(now time.Time) {
	for key, st := range f.st.all() {
		ready := st.probes.take(now.Add(-f.o.ProbeSettle).UnixNano(), st.lastStore.Load())
		for _, p := range ready {
			f.judge(key, st, f.held(key, p.hash))
		}
	}
}

// take removes and returns the probes taken before settled and followed by a
// store (stored is the last store's time).
func (p *probes) take(settled, stored int64) []probe {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ready []probe
	keep := p.pending[:0]
	for _, pr := range p.pending {
		if pr.at <= settled && stored > pr.at {
			ready = append(ready, pr)
		} else {
			keep = append(keep, pr)
		}
	}
	p.pending = keep
	return ready
}

// held reports whether the endpoint's events reported the block: a claim the
// router made while the request was on its way (kv.eventsBridge) is not
// evidence that the engine hashes as the picker does.
func (f *Feed) held(key string, hash uint64) bool { return f.o.Index.Observed(key, hash) }

// judge counts one probe's outcome and moves the alarm.
func (f *Feed) judge(key string, st *epState, found bool) {
	p := &st.probes
	p.mu.Lock()
	defer p.mu.Unlock()
	if found {
		p.misses = 0
		if p.alarm {
			p.alarm = false
			telemetry.EventsUnmatched.WithLabelValues(f.o.Pool, key).Set(0)
			f.o.Log.Info("KV events match routed requests again", "endpoint", key)
		}
		return
	}
	if p.misses++; p.misses >= f.o.UnmatchedAfter && !p.alarm {
		p.alarm = true
		telemetry.EventsUnmatched.WithLabelValues(f.o.Pool, key).Set(1)
		f.o.Log.Info("WARNING: KV events arrive but the blocks of requests routed here never appear in them: block size, tokenizer or model/adapter naming disagree with the engine's, so it gets no cache credit",
			"endpoint", key, "eventBlockSize", st.blockSize.Load(), "missedProbes", p.misses)
	}
}
