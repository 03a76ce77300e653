package telemetry

import (
	"sort"
	"sync"
)

// sources is a set of named values read at scrape time (an index's stats, a
// pool's loads), for collectors that export state owned elsewhere. The zero
// value is empty and ready; safe for concurrent use.
type sources[T any] struct {
	mu sync.Mutex
	m  map[string]func() T
}

// set registers fn under name, replacing an earlier one.
func (s *sources[T]) set(name string, fn func() T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]func() T{}
	}
	s.m[name] = fn
}

// remove drops name.
func (s *sources[T]) remove(name string) {
	s.mu.Lock()
	delete(s.m, name)
	s.mu.Unlock()
}

// each calls fn with every source's current value, in name order. The
// sources run outside the lock: a slow one never blocks registration.
func (s *sources[T]) each(fn func(name string, v T)) {
	s.mu.Lock()
	names := make([]string, 0, len(s.m))
	for n := range s.m {
		names = append(names, n)
	}
	sort.Strings(names)
	fns := make([]func() T, len(names))
	for i, n := range names {
		fns[i] = s.m[n]
	}
	s.mu.Unlock()
	for i, n := range names {
		fn(n, fns[i]())
	}
}
