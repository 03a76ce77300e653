package fleetsim

import (
	"cmp"
	"slices"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/request"
)

// SGLangOptions are the cache-aware policy's knobs, defaults as SGLang's
// router documents them.
type SGLangOptions struct {
	// CacheThreshold: route to the best-matching endpoint only when its
	// matched share of the prompt exceeds this (default 0.5).
	CacheThreshold float64
	// BalanceAbs and BalanceRel: the load is imbalanced when max-min > abs
	// AND max > rel*min (defaults 32 and 1.1); then the least loaded wins.
	BalanceAbs int
	BalanceRel float64
	// MaxTreeTokens bounds each endpoint's tree (default 2^24 tokens, SGLang's
	// 2^26 characters at ~4 characters a token).
	MaxTreeTokens int
	// EvictionInterval is how often trees are trimmed (default 120s).
	EvictionInterval time.Duration
	// BlockSize is the tree's granularity in tokens (default 16).
	BlockSize int
}

func (o *SGLangOptions) setDefaults() {
	if o.CacheThreshold == 0 {
		o.CacheThreshold = 0.5
	}
	if o.BalanceAbs == 0 {
		o.BalanceAbs = 32
	}
	if o.BalanceRel == 0 {
		o.BalanceRel = 1.1
	}
	if o.MaxTreeTokens == 0 {
		o.MaxTreeTokens = 1 << 24
	}
	if o.EvictionInterval == 0 {
		o.EvictionInterval = 120 * time.Second
	}
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
}

// SGLangCacheAware is SGLang's cache-aware router as its documentation
// describes it, as a baseline: it keeps its own approximate prefix tree per
// endpoint built only from its own routing decisions (no engine feedback)
// and its own in-flight request counts. When the load is imbalanced it
// routes to the least loaded endpoint; otherwise to the endpoint with the
// longest prefix match if that match covers more than CacheThreshold of the
// prompt, else to the endpoint whose tree is smallest. The chosen endpoint's
// tree then holds the prompt.
func SGLangCacheAware(name string, o SGLangOptions) Spec {
	o.setDefaults()
	return Spec{Name: name, Build: func(env Env) (Policy, error) {
		p := &sglang{o: o, now: env.Now, seed: kvindex.Seed(env.Model, "", "")}
		for _, e := range env.Set.Snapshot().List {
			p.eps = append(p.eps, &sgEndpoint{key: e.Key(), tree: map[uint64]int64{}})
		}
		return p, nil
	}}
}

type sglang struct {
	o         SGLangOptions
	now       func() time.Time
	seed      uint64
	eps       []*sgEndpoint
	lastEvict time.Time
}

// sgEndpoint is one endpoint's approximate tree (a set of chained block
// hashes with their last use, equivalent to a block-granular radix tree) and
// its in-flight count.
type sgEndpoint struct {
	key  string
	tree map[uint64]int64
	load int
}

type sgPending struct {
	chain  []uint64
	tokens int
}

func (p *sgPending) PromptTokens() int { return p.tokens }
func (p *sgPending) Priority() int     { return 0 }

func (p *sglang) Prepare(a *Arrival) (Pending, error) {
	chain := kvindex.BlockHashes(nil, p.seed, a.Tokens, p.o.BlockSize)
	return &sgPending{chain: chain, tokens: len(a.Tokens)}, nil
}

func (p *sglang) Admission() *admission.Options                  { return nil }
func (p *sglang) Admissible(Pending) bool                        { return true }
func (p *sglang) WantsEvents() bool                              { return false }
func (p *sglang) HandleEvents(string, kvevents.Batch)            {}
func (p *sglang) Dispatch(pd Pending) (Ticket, error)            { return p.route(pd.(*sgPending)), nil }
func (p *sglang) matchLen(e *sgEndpoint, chain []uint64) (n int) { return matchChain(e.tree, chain) }

func matchChain(tree map[uint64]int64, chain []uint64) int {
	n := 0
	for n < len(chain) {
		if _, ok := tree[chain[n]]; !ok {
			break
		}
		n++
	}
	return n
}

func (p *sglang) route(pd *sgPending) Ticket {
	e := p.choose(pd)
	t := p.now().UnixNano()
	for _, h := range pd.chain {
		e.tree[h] = t
	}
	e.load++
	return &sgTicket{e: e}
}

func (p *sglang) choose(pd *sgPending) *sgEndpoint {
	lo, hi := p.eps[0], p.eps[0]
	for _, e := range p.eps {
		if e.load < lo.load {
			lo = e
		}
		if e.load > hi.load {
			hi = e
		}
	}
	if hi.load-lo.load > p.o.BalanceAbs && float64(hi.load) > p.o.BalanceRel*float64(lo.load) {
		return lo
	}
	best, bestN := p.eps[0], -1
	for _, e := range p.eps {
		if n := p.matchLen(e, pd.chain); n > bestN || (n == bestN && e.load < best.load) {
			best, bestN = e, n
		}
	}
	if pd.tokens > 0 && float64(bestN*p.o.BlockSize)/float64(pd.tokens) > p.o.CacheThreshold {
		return best
	}
	small := p.eps[0]
	for _, e := range p.eps {
		if len(e.tree) < len(small.tree) {
			small = e
		}
	}
	return small
}

// Tick trims every tree to its bound, least recently used blocks first,
// every EvictionInterval.
func (p *sglang) Tick(now time.Time) {
	if now.Sub(p.lastEvict) < p.o.EvictionInterval {
		return
	}
	p.lastEvict = now
	limit := p.o.MaxTreeTokens / p.o.BlockSize
	for _, e := range p.eps {
		if len(e.tree) > limit {
			evictOldest(e.tree, len(e.tree)-limit)
		}
	}
}

func evictOldest(tree map[uint64]int64, n int) {
	type kv struct {
		h uint64
		t int64
	}
	all := make([]kv, 0, len(tree))
	for h, t := range tree {
		all = append(all, kv{h, t})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.h, b.h) // map order is random: keep eviction deterministic
	})
	for _, x := range all[:n] {
		delete(tree, x.h)
	}
}

type sgTicket struct {
	e    *sgEndpoint
	done bool
}

func (t *sgTicket) Endpoint() string    { return t.e.key }
func (t *sgTicket) FirstToken()         {}
func (t *sgTicket) Progress(int)        {}
func (t *sgTicket) Usage(request.Usage) {}
func (t *sgTicket) Done(error) {
	if !t.done {
		t.done = true
		t.e.load--
	}
}
