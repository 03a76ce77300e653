package router

import (
	"sync"
	"time"
)

// sessions pins a session id to an endpoint for a sliding TTL.
type sessions struct {
	ttl  time.Duration
	mu   sync.Mutex
	pins map[string]pinEntry
	per  map[string]int // live pins per endpoint
}

type pinEntry struct {
	endpoint string
	expires  time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, pins: map[string]pinEntry{}, per: map[string]int{}}
}

// get returns the session's endpoint if its pin is live.
func (s *sessions) get(id string, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pins[id]
	if !ok || now.After(p.expires) {
		return ""
	}
	return p.endpoint
}

// set pins (or re-pins) id and slides its expiry.
func (s *sessions) set(id, endpoint string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.pins[id]; ok {
		s.unpin(old.endpoint)
	}
	s.per[endpoint]++
	s.pins[id] = pinEntry{endpoint: endpoint, expires: now.Add(s.ttl)}
}

// count is the number of pins on endpoint (expired ones until expire runs).
func (s *sessions) count(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.per[endpoint]
}

// expire drops idle pins and returns how many remain.
func (s *sessions) expire(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, p := range s.pins {
		if now.After(p.expires) {
			delete(s.pins, id)
			s.unpin(p.endpoint)
		}
	}
	return len(s.pins)
}

// unpin takes one pin off endpoint's count (dropping it at zero, so
// endpoints that left do not accumulate). Call with s.mu held.
func (s *sessions) unpin(endpoint string) {
	if s.per[endpoint]--; s.per[endpoint] <= 0 {
		delete(s.per, endpoint)
	}
}
