package fleetsim

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// SGLangOptions are the cache-aware policy's knobs. The zero value takes the
// current launcher's defaults (sgl-model-gateway's RouterArgs and its logged
// CacheAware config: cache threshold 0.3, balance 64 / 1.5, eviction every
// 60 s, trees of 2^26 characters, least-loaded on a miss); SGLangV04Options
// are the older ones.
type SGLangOptions struct {
	// CacheThreshold: route to the best-matching endpoint only when its
	// matched share of the prompt's characters exceeds this.
	CacheThreshold float64
	// BalanceAbs and BalanceRel: the load is imbalanced when max-min > abs
	// AND max > rel*min; then the least loaded wins.
	BalanceAbs int
	BalanceRel float64
	// MaxTreeChars bounds each endpoint's tree in characters of prompt text.
	MaxTreeChars int
	// EvictionInterval is how often trees are trimmed to MaxTreeChars.
	EvictionInterval time.Duration
	// SmallestTreeOnMiss sends a low match to the endpoint whose tree is
	// smallest (the older policy) instead of the least loaded one.
	SmallestTreeOnMiss bool
	// BlockBytes is the tree's granularity in bytes of text (default 64).
	// Upstream's radix tree matches single characters; a 64-byte block
	// (about 16 tokens) keeps memory bounded and moves the match ratio by
	// under one block.
	BlockBytes int
}

// SGLangV04Options are the cache-aware router's earlier launcher defaults:
// threshold 0.5, balance 32 / 1.1, eviction every 120 s, smallest tree on a miss.
func SGLangV04Options() SGLangOptions {
	return SGLangOptions{CacheThreshold: 0.5, BalanceAbs: 32, BalanceRel: 1.1, EvictionInterval: 120 * time.Second,
		SmallestTreeOnMiss: true}
}

func (o *SGLangOptions) setDefaults() {
	if o.CacheThreshold == 0 {
		o.CacheThreshold = 0.3
	}
	if o.BalanceAbs == 0 {
		o.BalanceAbs = 64
	}
	if o.BalanceRel == 0 {
		o.BalanceRel = 1.5
	}
	if o.MaxTreeChars == 0 {
		o.MaxTreeChars = 1 << 26
	}
	if o.EvictionInterval == 0 {
		o.EvictionInterval = 60 * time.Second
	}
	if o.BlockBytes == 0 {
		o.BlockBytes = 64
	}
}

// SGLangCacheAware is SGLang's cache-aware router as its source has it, as a
// baseline: it sees the prompt text and keeps its own approximate prefix
// tree per endpoint built only from its own routing decisions (no engine
// feedback), and its own in-flight request counts. When the load is
// imbalanced it routes to the least loaded endpoint; otherwise to the
// endpoint with the longest prefix match if that match covers more than
// CacheThreshold of the prompt, else to the least loaded endpoint (the
// smallest tree with SmallestTreeOnMiss). Ties go at random. The chosen
// endpoint's tree then holds the prompt.
func SGLangCacheAware(name string, o SGLangOptions) Spec {
	o.setDefaults()
	return Spec{Name: name, Build: func(env Env) (Policy, error) {
		p := &sglang{o: o, now: env.Now, seed: kvindex.Seed(env.Model, "", ""),
			rnd: rand.New(rand.NewPCG(uint64(env.Seed), 0x73676c))}
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
	rnd       *rand.Rand
	eps       []*sgEndpoint
	lastEvict time.Time
	tokens    []uint32
	ties      []*sgEndpoint
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
	chain []uint64
	chars int
}

func (p *sgPending) PromptTokens() int { return p.chars / tokenize.BytesPerToken }
func (p *sgPending) Priority() int     { return 0 }

// Prepare hashes the text in BlockBytes blocks (the bytes tokenizer makes
// four bytes one id).
func (p *sglang) Prepare(a *Arrival) (Pending, error) {
	text := a.Text()
	var err error
	p.tokens, err = tokenize.Bytes{}.Tokenize(context.Background(), "", text, p.tokens[:0])
	if err != nil {
		return nil, err
	}
	chain := kvindex.BlockHashes(nil, p.seed, p.tokens, p.o.BlockBytes/tokenize.BytesPerToken)
	return &sgPending{chain: chain, chars: len(text)}, nil
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
	lo, hi := p.eps[0].load, p.eps[0].load
	for _, e := range p.eps {
		lo, hi = min(lo, e.load), max(hi, e.load)
	}
	if hi-lo > p.o.BalanceAbs && float64(hi) > p.o.BalanceRel*float64(lo) {
		return p.pick(func(e *sgEndpoint) int { return e.load })
	}
	bestN := 0
	for _, e := range p.eps {
		bestN = max(bestN, p.matchLen(e, pd.chain))
	}
	if pd.chars > 0 && float64(bestN*p.o.BlockBytes)/float64(pd.chars) > p.o.CacheThreshold {
		return p.pick(func(e *sgEndpoint) int { return -p.matchLen(e, pd.chain) })
	}
	if p.o.SmallestTreeOnMiss {
		return p.pick(func(e *sgEndpoint) int { return len(e.tree) })
	}
	return p.pick(func(e *sgEndpoint) int { return e.load })
}

// pick returns an endpoint with the smallest key(e), at random among ties.
func (p *sglang) pick(key func(*sgEndpoint) int) *sgEndpoint {
	p.ties = p.ties[:0]
	best := 0
	for _, e := range p.eps {
		k := key(e)
		if len(p.ties) == 0 || k < best {
			best, p.ties = k, append(p.ties[:0], e)
		} else if k == best {
			p.ties = append(p.ties, e)
		}
	}
	return p.ties[p.rnd.IntN(len(p.ties))]
}

// Tick trims every tree to its bound, least recently used blocks first,
// every EvictionInterval.
func (p *sglang) Tick(now time.Time) {
	if now.Sub(p.lastEvict) < p.o.EvictionInterval {
		return
	}
	p.lastEvict = now
	limit := p.o.MaxTreeChars / p.o.BlockBytes
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
