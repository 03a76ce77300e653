package kvevents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-zeromq/zmq4"
)

// Subscriber timing. Reconnects back off exponentially between the bounds.
const (
	minBackoff    = 100 * time.Millisecond
	maxBackoff    = 5 * time.Second
	dialTimeout   = 2 * time.Second
	replayTimeout = 5 * time.Second
)

// SubscriberOptions says where one engine publishes and which endpoint it is.
type SubscriberOptions struct {
	// Endpoint of the engine's PUB socket, dialled, e.g. "tcp://10.0.0.1:5557".
	Endpoint string
	// ReplayEndpoint of the engine's ROUTER socket; "" disables gap recovery.
	ReplayEndpoint string
	// Topic prefix to subscribe to; "" receives every topic.
	Topic string
	// EndpointKey names the picker endpoint these events describe, e.g. "10.0.0.1:8000".
	EndpointKey string
}

// Handler receives decoded batches. A Subscriber calls it from one goroutine,
// in sequence order; different Subscribers call it concurrently.
type Handler interface {
	HandleBatch(endpointKey string, b Batch)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(endpointKey string, b Batch)

// HandleBatch calls f.
func (f HandlerFunc) HandleBatch(endpointKey string, b Batch) { f(endpointKey, b) }

// SubscriberStats is a snapshot of one Subscriber's counters.
type SubscriberStats struct {
	Received      uint64    // live batches delivered
	Replayed      uint64    // batches delivered from the replay endpoint
	Gaps          uint64    // sequence gaps seen on the live stream
	Missed        uint64    // batches neither received nor replayed
	Duplicates    uint64    // live batches dropped because replay had delivered them
	DecodeErrors  uint64    // messages with bad frames or payloads
	Restarts      uint64    // publisher restarts detected (sequence went back)
	SkippedEvents uint64    // events with unknown tags
	InvalidEvents uint64    // known events dropped for a malformed field (their batch was applied)
	LastSeq       uint64    // last sequence delivered (valid when HaveSeq)
	HaveSeq       bool      // a sequence has been seen since start
	LastEventTime time.Time // when the last batch was delivered
	Connected     bool      // the SUB socket is connected
}

// Subscriber follows one engine's KV event stream, recovers sequence gaps
// through replay and hands batches to a Handler. Create with NewSubscriber
// and drive with Run; Stats is safe for concurrent use.
type Subscriber struct {
	opts SubscriberOptions
	h    Handler
	log  logr.Logger
	m    metrics

	// sequence tracking, owned by the Run goroutine
	have     bool
	last     uint64
	fresh    bool      // no message yet on the current connection, nor a catch-up through replay
	lastMark batchMark // the batch delivered under last
	caughtUp bool      // replay delivered up to last and no live batch since: live ones at or below it, seq 0 too, are duplicates

	mu    sync.Mutex
	stats SubscriberStats
}

// NewSubscriber returns a Subscriber; nothing happens until Run.
func NewSubscriber(o SubscriberOptions, h Handler, log logr.Logger) *Subscriber {
	log = log.WithValues("endpoint", o.EndpointKey, "kvEvents", o.Endpoint)
	return &Subscriber{opts: o, h: h, log: log, m: newMetrics(o.EndpointKey)}
}

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (s *Subscriber) Stats() SubscriberStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *Subscriber) update(f func(*SubscriberStats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// Run connects, receives and reconnects with exponential backoff until ctx
// ends, then returns nil. It returns an error at once for invalid options.
// Run must not be called concurrently with itself.
func (s *Subscriber) Run(ctx context.Context) error {
	if s.opts.Endpoint == "" || s.h == nil {
		return errors.New("kvevents: subscriber needs an endpoint and a handler")
	}
	backoff := minBackoff
	for {
		connected, err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			backoff = minBackoff
		}
		s.log.V(1).Info("kv event stream interrupted; reconnecting", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session holds one connection until it fails. connected reports whether the
// dial succeeded, so a flapping publisher does not reset the backoff.
func (s *Subscriber) session(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := zmq4.NewSub(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(dialTimeout))
	defer sub.Close()
	if err := sub.Dial(subscribeAddr(s.opts.Endpoint)); err != nil {
		return false, fmt.Errorf("dial: %w", err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, s.opts.Topic); err != nil {
		return true, fmt.Errorf("subscribe: %w", err)
	}
	s.setConnected(true)
	defer s.setConnected(false)
	s.fresh, s.caughtUp = true, false
	if s.publisherChanged(ctx) {
		s.restart(0)
	}
	s.catchUp(ctx)
	for {
		msg, err := sub.Recv()
		if err != nil {
			return true, fmt.Errorf("receive: %w", err)
		}
		s.onMessage(ctx, msg.Frames)
	}
}

func (s *Subscriber) setConnected(c bool) {
	s.update(func(st *SubscriberStats) { st.Connected = c })
	v := 0.0
	if c {
		v = 1
	}
	s.m.connected.Set(v)
}
