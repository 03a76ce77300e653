package replicasync

import (
	"sync"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// capture is a Transport that keeps what it is given.
type capture struct {
	mu  sync.Mutex
	evs []Event
}

func (c *capture) Broadcast(evs []Event) {
	c.mu.Lock()
	c.evs = append(c.evs, evs...)
	c.mu.Unlock()
}

type fixture struct {
	r      *Replica
	active *activework.Tracker
	index  *kvindex.Index
	clk    *clock
}

func newFixture(t testing.TB, id string, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{active: activework.New(time.Hour, nil), index: kvindex.New(kvindex.Options{}), clk: &clock{now: t0}}
	o := Options{ID: id, Active: f.active, Index: f.index, Now: f.clk.Now}
	if mod != nil {
		mod(&o)
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// work is a request of prompt tokens (all uncached) in blocks of 16.
func work(prompt int, chain ...uint64) activework.Work {
	return activework.Work{PromptTokens: prompt, UncachedTokens: prompt, ExpectedOutput: 16, BlockSize: 16, Blocks: chain}
}

// ev builds a peer event from origin "a", epoch 1.
func ev(seq uint64, k Kind, req uint64, endpoint string) Event {
	e := Event{Origin: "a", Epoch: 1, Seq: seq, Kind: k, Request: req, At: t0, Endpoint: endpoint}
	if k == KindAdded {
		e.Work = work(64, 11, 12, 13, 14)
	}
	return e
}
