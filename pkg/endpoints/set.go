package endpoints

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// Snapshot is an immutable view of the candidate set. List is sorted by key.
type Snapshot struct {
	Version uint64
	List    []*Entry
	byKey   map[string]*Entry
}

// Get returns the entry for key.
func (s *Snapshot) Get(key string) (*Entry, bool) {
	e, ok := s.byKey[key]
	return e, ok
}

// Index returns key's position in List.
func (s *Snapshot) Index(key string) (int, bool) {
	if e, ok := s.byKey[key]; ok {
		return e.pos, true
	}
	return 0, false
}

// Set is the current candidate set. Reads are lock-free; writes are serialised.
type Set struct {
	mu        sync.Mutex
	snap      atomic.Pointer[Snapshot]
	listeners []func(*Snapshot)
}

// NewSet returns an empty set.
func NewSet() *Set {
	s := &Set{}
	s.snap.Store(&Snapshot{byKey: map[string]*Entry{}})
	return s
}

// Snapshot returns the current view; never nil.
func (s *Set) Snapshot() *Snapshot { return s.snap.Load() }

// OnChange registers fn to run (synchronously, under the writer lock) after
// every Replace. Register before writes start.
func (s *Set) OnChange(fn func(*Snapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

// Replace installs eps as the candidate set. Entries whose endpoint is
// unchanged keep their load; a duplicate key is an error and changes nothing.
func (s *Set) Replace(eps []Endpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	next := &Snapshot{Version: old.Version + 1, byKey: make(map[string]*Entry, len(eps))}
	for _, ep := range eps {
		ep.setDefaults()
		key := ep.Key()
		if _, dup := next.byKey[key]; dup {
			return fmt.Errorf("duplicate endpoint %s", key)
		}
		e := &Entry{Endpoint: ep, key: key}
		if prev, ok := old.byKey[key]; ok {
			e.load.Store(prev.load.Load())
		}
		next.byKey[key] = e
		next.List = append(next.List, e)
	}
	sort.Slice(next.List, func(i, j int) bool { return next.List[i].key < next.List[j].key })
	for i, e := range next.List {
		e.pos = i
	}
	s.snap.Store(next)
	for _, fn := range s.listeners {
		fn(next)
	}
	return nil
}

// UpdateLoad records the latest load of key; unknown keys are ignored (the
// endpoint may have left the pool while it was being scraped).
func (s *Set) UpdateLoad(key string, l Load) bool {
	e, ok := s.snap.Load().byKey[key]
	if ok {
		e.load.Store(&l)
	}
	return ok
}
