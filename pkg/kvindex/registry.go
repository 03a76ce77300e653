package kvindex

import (
	"sync"
	"sync/atomic"
)

// registry interns endpoint keys to small ids so block entries can hold
// holder sets as bitsets. Ids are reused only after every entry of the
// previous owner has been removed from the shards.
type registry struct {
	mu     sync.RWMutex
	byName map[string]*endpoint
	free   []uint32
	next   uint32
	eps    atomic.Pointer[[]*endpoint] // id -> endpoint (nil when free); copy-on-write
}

func newRegistry() *registry {
	r := &registry{byName: make(map[string]*endpoint)}
	r.eps.Store(&[]*endpoint{})
	return r
}

// get returns the endpoint or nil.
func (r *registry) get(name string) *endpoint {
	r.mu.RLock()
	ep := r.byName[name]
	r.mu.RUnlock()
	return ep
}

// getOrCreate returns the endpoint, interning it on first sight.
func (r *registry) getOrCreate(name string) *endpoint {
	if ep := r.get(name); ep != nil {
		return ep
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ep := r.byName[name]; ep != nil {
		return ep
	}
	ep := newEndpoint(name, r.allocID())
	r.byName[name] = ep
	r.publish(ep.id, ep)
	return ep
}

func (r *registry) allocID() uint32 {
	if n := len(r.free); n > 0 {
		id := r.free[n-1]
		r.free = r.free[:n-1]
		return id
	}
	r.next++
	return r.next - 1
}

// publish stores a new id -> endpoint snapshot; callers hold r.mu.
func (r *registry) publish(id uint32, ep *endpoint) {
	old := *r.eps.Load()
	eps := make([]*endpoint, max(len(old), int(id)+1))
	copy(eps, old)
	eps[id] = ep
	r.eps.Store(&eps)
}

// unlink removes the key so no new work finds it; the id stays reserved
// until release.
func (r *registry) unlink(name string) *endpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	ep := r.byName[name]
	if ep != nil {
		delete(r.byName, name)
		r.publish(ep.id, nil)
	}
	return ep
}

// release makes an unlinked endpoint's id reusable.
func (r *registry) release(id uint32) {
	r.mu.Lock()
	r.free = append(r.free, id)
	r.mu.Unlock()
}

// all returns a snapshot of the registered endpoints.
func (r *registry) all() []*endpoint {
	r.mu.RLock()
	defer r.mu.RUnlock()
	eps := make([]*endpoint, 0, len(r.byName))
	for _, ep := range r.byName {
		eps = append(eps, ep)
	}
	return eps
}
