package extproc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
)

// fakeRouter is an in-memory Router: round-robin over a fixed list, the subset hint honoured, with configurable
// errors, blocking and fallbacks. Safe for concurrent use.
type fakeRouter struct {
	mu        sync.Mutex
	endpoints []string
	fallbacks int                 // extra endpoints after the primary
	headers   []route.HeaderValue // Decision.Headers
	err       error               // returned by Route when set
	block     bool                // Route waits for ctx
	next      int
	last      route.Input // the latest input (only that one: benchmarks route thousands of large prompts)
	decisions []*fakeDecision
	noRecord  bool   // benchmarks: keep no decisions and no last input
	onCommit  func() // called by each Decision's Commit (tests inspect the stream at that point)
}

func newFakeRouter(eps ...string) *fakeRouter { return &fakeRouter{endpoints: eps} }

func (r *fakeRouter) Route(ctx context.Context, in *route.Input) (route.Decision, error) {
	r.mu.Lock()
	if !r.noRecord {
		r.last = *in
		if in.Request != nil { // Prompt and Raw alias pooled buffers that outlive this call only until Done
			req := *in.Request
			req.Prompt, req.Raw = bytes.Clone(req.Prompt), bytes.Clone(req.Raw)
			r.last.Request = &req
		}
	}
	block, err := r.block, r.err
	r.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return r.pick(in)
}

func (r *fakeRouter) pick(in *route.Input) (route.Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cands := r.endpoints
	if in.SubsetPresent {
		cands = slices.DeleteFunc(slices.Clone(cands), func(ep string) bool { return !slices.Contains(in.Subset, ep) })
	}
	if len(cands) == 0 {
		return nil, apierr.Unavailable("no eligible endpoint")
	}
	var eps []string
	for i := 0; i <= min(r.fallbacks, len(cands)-1); i++ {
		eps = append(eps, cands[(r.next+i)%len(cands)])
	}
	r.next++
	d := &fakeDecision{eps: eps, headers: r.headers, done: make(chan struct{}), onCommit: r.onCommit}
	if !r.noRecord {
		r.decisions = append(r.decisions, d)
	}
	return d, nil
}

func (r *fakeRouter) lastInput() route.Input {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *fakeRouter) allDecisions() []*fakeDecision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.decisions)
}

func (r *fakeRouter) set(f func(r *fakeRouter)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// fakeDecision records the lifecycle calls.
type fakeDecision struct {
	eps      []string
	headers  []route.HeaderValue
	done     chan struct{} // closed by the first Done
	onCommit func()

	mu sync.Mutex
	st decisionState
}

type decisionState struct {
	commits    int
	served     string
	servedPre  bool // Served arrived before Commit
	firstToken int
	atEnd      int // of firstToken, those seen only at a non-streamed response's end
	progress   int
	usage      []request.Usage
	doneCalls  int
	doneErr    error
	refused    int // Refused calls, all before Done
}

func (d *fakeDecision) Endpoints() []string          { return d.eps }
func (d *fakeDecision) Headers() []route.HeaderValue { return d.headers }
func (d *fakeDecision) Commit() {
	if d.onCommit != nil {
		d.onCommit()
	}
	d.with(func(s *decisionState) { s.commits++ })
}
func (d *fakeDecision) Served(ep string) {
	d.with(func(s *decisionState) { s.served, s.servedPre = ep, s.commits == 0 })
}
func (d *fakeDecision) FirstToken() { d.with(func(s *decisionState) { s.firstToken++ }) }
func (d *fakeDecision) FirstTokenAtEnd() {
	d.with(func(s *decisionState) { s.firstToken++; s.atEnd++ })
}
func (d *fakeDecision) Progress(n int) { d.with(func(s *decisionState) { s.progress = n }) }
func (d *fakeDecision) Usage(u request.Usage) {
	d.with(func(s *decisionState) { s.usage = append(s.usage, u) })
}

func (d *fakeDecision) Refused() {
	d.with(func(s *decisionState) {
		if s.doneCalls == 0 {
			s.refused++
		}
	})
}

func (d *fakeDecision) Done(err error) {
	d.with(func(s *decisionState) {
		s.doneCalls++
		if s.doneCalls == 1 {
			s.doneErr = err
			close(d.done)
		}
	})
}

func (d *fakeDecision) with(f func(s *decisionState)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(&d.st)
}

func (d *fakeDecision) state() decisionState {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.st
	s.usage = slices.Clone(s.usage)
	return s
}

var errBoom = errors.New("boom")
