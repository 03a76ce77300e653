package activework

import (
	"math"
	"sync"
	"time"
)

// prefillRate is an endpoint's uncached prompt tokens dispatched per second,
// an exponential average over the tracker's prefill window: how much of the
// endpoint's time the prefills coming there will take.
type prefillRate struct {
	mu sync.Mutex
	v  float64 // tokens per second at at
	at time.Time
}

// decayed is the rate at now. Call with r.mu held.
func (r *prefillRate) decayed(now time.Time, window time.Duration) float64 {
	if r.v == 0 || !now.After(r.at) {
		return r.v
	}
	return r.v * math.Exp(-now.Sub(r.at).Seconds()/window.Seconds())
}

// add counts tokens dispatched at now.
func (r *prefillRate) add(tokens int64, now time.Time, window time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v = r.decayed(now, window) + float64(tokens)/window.Seconds()
	if now.After(r.at) {
		r.at = now
	}
}

// SetPrefillWindow turns on the per-endpoint prefill rate (PrefillRate),
// averaged over window; 0 turns it off. Set it before dispatching: the rate
// counts only what starts after.
func (t *Tracker) SetPrefillWindow(window time.Duration) {
	t.window.Store(int64(max(window, 0)))
}

// PrefillRate is the uncached prompt tokens per second dispatched to
// endpoint (by this picker and, through replica sync, its peers), averaged
// over the prefill window; 0 when the window is off or nothing came.
func (t *Tracker) PrefillRate(endpoint string, now time.Time) float64 {
	w := time.Duration(t.window.Load())
	if w <= 0 {
		return 0
	}
	c := t.lookup(endpoint)
	if c == nil {
		return 0
	}
	c.rate.mu.Lock()
	defer c.rate.mu.Unlock()
	return c.rate.decayed(now, w)
}
