package router

import (
	"slices"
	"sync"
)

// coldMemo remembers, for one admission release pass, the eligibility
// groups in which no endpoint had room under the queue threshold: there a
// request no endpoint holds cached is refused (admitPicked's cold case), so
// the rest of the pass answers such requests with one index lookup each
// instead of reading the fleet's load and eligibility again. Capacity only
// shrinks within a pass (admission.Item.Pass), so what holds for the first
// request of a group holds for the rest. A long queue of cold requests in a
// fleet with room only for cached ones was scanned whole at that cost on
// every notification.
type coldMemo struct {
	mu     sync.Mutex
	pass   uint64
	groups []string // few: models times adapters
}

// full reports whether group was found without room for cold requests in pass.
func (m *coldMemo) full(pass uint64, group string) bool {
	if pass == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pass == pass && slices.Contains(m.groups, group)
}

// mark records that group had no room for cold requests in pass.
func (m *coldMemo) mark(pass uint64, group string) {
	if pass == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pass != pass {
		m.pass, m.groups = pass, m.groups[:0]
	}
	if !slices.Contains(m.groups, group) {
		m.groups = append(m.groups, group)
	}
}
