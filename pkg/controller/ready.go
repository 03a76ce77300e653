package controller

import (
	"context"
	"sync"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Readiness decides the picker's readiness: it has endpoints and, when leader
// election is on, holds the lease (active-passive: only the leader receives
// traffic, as with the reference picker). Safe for concurrent use.
type Readiness struct {
	mu         sync.Mutex
	set        func(bool)
	needLeader bool
	endpoints  bool
	leader     bool
}

// NewReadiness reports through set; needLeader gates readiness on leadership.
func NewReadiness(set func(bool), needLeader bool) *Readiness {
	r := &Readiness{set: set, needLeader: needLeader}
	if !needLeader {
		telemetry.KubeLeader.Set(1)
	}
	r.update()
	return r
}

// SetEndpoints records whether the candidate set is non-empty.
func (r *Readiness) SetEndpoints(any bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endpoints = any
	r.update()
}

// SetLeader records that this replica holds the lease.
func (r *Readiness) SetLeader(leader bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leader = leader
	if r.needLeader {
		telemetry.KubeLeader.Set(map[bool]float64{false: 0, true: 1}[leader])
	}
	r.update()
}

func (r *Readiness) update() { r.set(r.decide()) }

// decide is the current decision; call with mu held.
func (r *Readiness) decide() bool { return r.endpoints && (r.leader || !r.needLeader) }

// Ready reports the current decision.
func (r *Readiness) Ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.decide()
}

// FollowLeadership marks r the leader once elected closes (a manager's
// Elected()). Losing the lease ends the manager and so the process, as with
// the reference picker; a restart starts as a standby.
func FollowLeadership(ctx context.Context, elected <-chan struct{}, r *Readiness) {
	select {
	case <-elected:
		r.SetLeader(true)
	case <-ctx.Done():
	}
}
