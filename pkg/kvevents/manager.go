package kvevents

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Manager runs one Subscriber per configured publisher and converges the set
// on each Sync. Safe for concurrent use.
type Manager struct {
	h   Handler
	log logr.Logger

	mu   sync.Mutex
	subs map[SubscriberOptions]*running
}

type running struct {
	s      *Subscriber
	cancel context.CancelFunc
	done   chan struct{}
}

// NewManager returns a Manager that hands every subscriber's batches to h.
func NewManager(h Handler, log logr.Logger) *Manager {
	return &Manager{h: h, log: log, subs: map[SubscriberOptions]*running{}}
}

// Sync starts a Subscriber for each entry of subs not yet running (living
// until ctx ends or a later Sync drops it) and stops, waiting for, those no
// longer listed. Duplicate entries run once.
func (m *Manager) Sync(ctx context.Context, subs []SubscriberOptions) {
	want := make(map[SubscriberOptions]bool, len(subs))
	for _, o := range subs {
		want[o] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for o, r := range m.subs {
		if !want[o] {
			m.stop(o, r)
		}
	}
	for o := range want {
		if _, ok := m.subs[o]; !ok {
			m.start(ctx, o)
		}
	}
}

func (m *Manager) start(ctx context.Context, o SubscriberOptions) {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{s: NewSubscriber(o, m.h, m.log), cancel: cancel, done: make(chan struct{})}
	m.subs[o] = r
	go func() {
		defer close(r.done)
		if err := r.s.Run(ctx); err != nil {
			m.log.Error(err, "kv event subscriber not started", "endpoint", o.EndpointKey)
		}
	}()
}

// stop ends one subscriber; m.mu is held. Its metric series go too, unless
// another subscriber still reports for the same endpoint.
func (m *Manager) stop(o SubscriberOptions, r *running) {
	r.cancel()
	<-r.done
	delete(m.subs, o)
	for other := range m.subs {
		if other.EndpointKey == o.EndpointKey {
			return
		}
	}
	telemetry.ForgetKVEventsEndpoint(o.EndpointKey)
}

// Stats returns every running subscriber's counters.
func (m *Manager) Stats() map[SubscriberOptions]SubscriberStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[SubscriberOptions]SubscriberStats, len(m.subs))
	for o, r := range m.subs {
		out[o] = r.s.Stats()
	}
	return out
}

// Close stops every subscriber and waits for them.
func (m *Manager) Close() {
	m.Sync(context.Background(), nil)
}
