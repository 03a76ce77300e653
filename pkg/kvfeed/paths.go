package kvfeed

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// epState is what the feed knows of one endpoint's events: when the last
// batch arrived, the block size its stores state, whether it is on the events
// path, and the probes of the unmatched-blocks alarm.
type epState struct {
	last      atomic.Int64 // unix nanos of the last batch; 0 before any
	blockSize atomic.Int64 // from its BlockStored events; 0 before any
	lastStore atomic.Int64 // unix nanos of the last BlockStored
	onEvents  atomic.Bool
	probes    probes
}

// states is the feed's per-endpoint table. Lookups take a read lock only.
type states struct {
	mu  sync.RWMutex
	eps map[string]*epState
}

func (s *states) get(key string) *epState {
	s.mu.RLock()
	st := s.eps[key]
	s.mu.RUnlock()
	return st
}

func (s *states) getOrCreate(key string) *epState {
	if st := s.get(key); st != nil {
		return st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eps == nil {
		s.eps = map[string]*epState{}
	}
	st := s.eps[key]
	if st == nil {
		st = &epState{}
		s.eps[key] = st
	}
	return st
}

func (s *states) all() map[string]*epState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]*epState, len(s.eps))
	for k, v := range s.eps {
		out[k] = v
	}
	return out
}

func (s *states) forget(key string) {
	s.mu.Lock()
	delete(s.eps, key)
	s.mu.Unlock()
}

// OnEvents reports whether endpoint is on the events path: always with
// kv.observation "events"; with "auto" while it publishes (an event arrived
// within the silence bound, as of the last Check, or since). Safe for
// concurrent use; a read lock and two atomic loads.
func (f *Feed) OnEvents(endpoint string) bool {
	if !f.o.Auto {
		return true
	}
	st := f.st.get(endpoint)
	return st != nil && st.onEvents.Load()
}

// BlockSize is the block size endpoint's stored events state, 0 before any.
func (f *Feed) BlockSize(endpoint string) int {
	if st := f.st.get(endpoint); st != nil {
		return int(st.blockSize.Load())
	}
	return 0
}

// Version changes whenever an endpoint's path or event block size does, so a
// reader can cache what it derives from them.
func (f *Feed) Version() uint64 { return f.version.Load() }

// Track publishes a new endpoint's path gauge (predicted until its events
// arrive, with "auto").
func (f *Feed) Track(endpoint string) {
	telemetry.SetEndpointPath(f.o.Pool, endpoint, f.OnEvents(endpoint))
}

// Forget drops an endpoint that left the pool, with its gauges.
func (f *Feed) Forget(endpoint string) {
	f.st.forget(endpoint)
	telemetry.ForgetEndpointPath(f.o.Pool, endpoint)
	f.version.Add(1)
}

// seen records a batch from st's endpoint at now: it moves the endpoint to
// the events path at once, and notes its block size.
func (f *Feed) seen(key string, st *epState, now time.Time, blockSize int) {
	st.last.Store(now.UnixNano())
	if blockSize > 0 {
		st.lastStore.Store(now.UnixNano())
		if st.blockSize.Swap(int64(blockSize)) != int64(blockSize) {
			f.version.Add(1)
		}
	}
	if f.o.Auto && !st.onEvents.Load() && st.onEvents.CompareAndSwap(false, true) {
		f.version.Add(1)
		telemetry.SetEndpointPath(f.o.Pool, key, true)
		f.o.Log.Info("KV events arriving: endpoint on the events path", "endpoint", key)
	}
}

// checkPaths moves to the predicted path each endpoint silent for longer
// than the bound ("auto" only).
func (f *Feed) checkPaths(now time.Time) {
	if !f.o.Auto {
		return
	}
	for key, st := range f.st.all() {
		silent := now.Sub(time.Unix(0, st.last.Load())) > f.o.SilenceAfter
		if silent && st.onEvents.CompareAndSwap(true, false) {
			f.version.Add(1)
			telemetry.SetEndpointPath(f.o.Pool, key, false)
			f.o.Log.Info("no KV event within kv.eventsSilenceAfter: endpoint on the predicted path until its events resume",
				"endpoint", key, "silentFor", now.Sub(time.Unix(0, st.last.Load())).Round(time.Second))
		}
	}
}
