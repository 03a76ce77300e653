package main

import (
	"sync"

	"github.com/kvpick/kvpick/pkg/engine"
)

// stream carries one request's updates from the runner to its handler. push
// never blocks; the handler drains everything pending at each wake-up, so a
// slow client coalesces tokens instead of stalling the engine.
type stream struct {
	mu      sync.Mutex
	pending []engine.Update
	notify  chan struct{}
}

func newStream() *stream { return &stream{notify: make(chan struct{}, 1)} }

func (s *stream) push(u engine.Update) {
	s.mu.Lock()
	s.pending = append(s.pending, u)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// take moves the pending updates into dst.
func (s *stream) take(dst []engine.Update) []engine.Update {
	s.mu.Lock()
	dst = append(dst, s.pending...)
	s.pending = s.pending[:0]
	s.mu.Unlock()
	return dst
}
