package fleetsim

import (
	"container/list"
	"context"
	"math/rand/v2"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// GAIEOptions are the Gateway API Inference Extension default profile's
// knobs, defaults as its prefix-cache scorer and default EndpointPickerConfig
// set them (pkg/epp/scheduling/framework/plugins/multi/prefix/plugin.go and
// the chart's default profile).
type GAIEOptions struct {
	// HashBlockBytes is the prompt bytes per hashed block (default 64: 16
	// tokens of ~4 characters).
	HashBlockBytes int
	// MaxPrefixBlocks caps the blocks hashed per prompt (default 256): two
	// prompts equal for their first 16 KiB look the same.
	MaxPrefixBlocks int
	// LRUCapacity is each endpoint's index size in blocks (default 31,250);
	// least recently added blocks go first, there is no TTL.
	LRUCapacity int
	// Weights of the queue, KV-utilisation and prefix scorers (default 2, 2, 3).
	QueueWeight, KVUtilWeight, PrefixWeight float64
}

func (o *GAIEOptions) setDefaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.HashBlockBytes, 64)
	def(&o.MaxPrefixBlocks, 256)
	def(&o.LRUCapacity, 31250)
	if o.QueueWeight == 0 && o.KVUtilWeight == 0 && o.PrefixWeight == 0 {
		o.QueueWeight, o.KVUtilWeight, o.PrefixWeight = 2, 2, 3
	}
}

// GAIEDefault is the Gateway API Inference Extension's endpoint picker with
// its default profile, as a baseline: it sees the prompt text, hashes its
// first MaxPrefixBlocks blocks of HashBlockBytes bytes into a chain, and
// scores each endpoint by 2 x queue (scraped waiting requests, min-max
// normalised: fewest = 1) + 2 x (1 - scraped KV usage) + 3 x the share of
// the chain its own per-endpoint LRU index says the endpoint holds; the
// highest score wins, ties at random. The chosen endpoint's LRU then takes
// the chain. It has no busy filter and never refuses default-priority
// traffic (its saturation detector only sheds sheddable requests).
func GAIEDefault(name string, o GAIEOptions) Spec {
	o.setDefaults()
	return Spec{Name: name, Build: func(env Env) (Policy, error) {
		p := &gaie{o: o, set: env.Set, seed: kvindex.Seed(env.Model, "", ""),
			rnd: rand.New(rand.NewPCG(uint64(env.Seed), 0x67616965))}
		for _, e := range env.Set.Snapshot().List {
			p.eps = append(p.eps, &gaieEndpoint{key: e.Key(), lru: newLRU(o.LRUCapacity)})
		}
		return p, nil
	}}
}

type gaie struct {
	o      GAIEOptions
	set    *endpoints.Set
	seed   uint64
	rnd    *rand.Rand
	eps    []*gaieEndpoint
	tokens []uint32
}

type gaieEndpoint struct {
	key string
	lru *lru
}

type gaiePending struct {
	chain  []uint64
	tokens int
}

func (p *gaiePending) PromptTokens() int { return p.tokens }
func (p *gaiePending) Priority() int     { return 0 }

// Prepare hashes the text's leading blocks. The bytes tokenizer makes four
// bytes one id, so 16 ids are one 64-byte block.
func (p *gaie) Prepare(a *Arrival) (Pending, error) {
	text := a.Text()
	text = text[:min(len(text), p.o.HashBlockBytes*p.o.MaxPrefixBlocks)]
	var err error
	p.tokens, err = tokenize.Bytes{}.Tokenize(context.Background(), "", text, p.tokens[:0])
	if err != nil {
		return nil, err
	}
	per := p.o.HashBlockBytes / tokenize.BytesPerToken
	chain := kvindex.BlockHashes(nil, p.seed, p.tokens, per)
	return &gaiePending{chain: chain, tokens: len(a.Text()) / tokenize.BytesPerToken}, nil
}

func (p *gaie) Admission() *admission.Options       { return nil }
func (p *gaie) Admissible(Pending) bool             { return true }
func (p *gaie) WantsEvents() bool                   { return false }
func (p *gaie) HandleEvents(string, kvevents.Batch) {}
func (p *gaie) Tick(time.Time)                      {}

func (p *gaie) Dispatch(pd Pending) (Ticket, error) {
	g := pd.(*gaiePending)
	e := p.eps[p.choose(g.chain)]
	for _, h := range g.chain {
		e.lru.add(h)
	}
	return &keyTicket{key: e.key}, nil
}

// choose returns the index of the best-scoring endpoint.
func (p *gaie) choose(chain []uint64) int {
	snap := p.set.Snapshot()
	waiting := make([]float64, len(p.eps))
	usage := make([]float64, len(p.eps))
	for i, e := range p.eps {
		if ep, ok := snap.Get(e.key); ok && ep.Load().Fresh {
			ld := ep.Load()
			waiting[i], usage[i] = float64(ld.Waiting), ld.KVUsage
		}
	}
	match := p.matchLongest(chain)
	lo, hi := minMax(waiting)
	best, ties := -1.0, []int(nil)
	for i := range p.eps {
		q := 1.0
		if hi > lo {
			q = (hi - waiting[i]) / (hi - lo)
		}
		pre := 0.0
		if len(chain) > 0 {
			pre = float64(match[i]) / float64(len(chain))
		}
		s := p.o.QueueWeight*q + p.o.KVUtilWeight*(1-min(max(usage[i], 0), 1)) + p.o.PrefixWeight*pre
		switch {
		case s > best:
			best, ties = s, append(ties[:0], i)
		case s == best:
			ties = append(ties, i)
		}
	}
	return ties[p.rnd.IntN(len(ties))]
}

// matchLongest walks the chain while some endpoint holds the block,
// crediting every endpoint that holds it (upstream's greedy walk).
func (p *gaie) matchLongest(chain []uint64) []int {
	n := make([]int, len(p.eps))
	for _, h := range chain {
		any := false
		for i, e := range p.eps {
			if e.lru.has(h) {
				n[i]++
				any = true
			}
		}
		if !any {
			break
		}
	}
	return n
}

func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// lru is a set of block hashes bounded to capacity, least recently added
// first out.
type lru struct {
	capacity int
	order    *list.List // front = most recent
	at       map[uint64]*list.Element
}

func newLRU(capacity int) *lru {
	return &lru{capacity: capacity, order: list.New(), at: map[uint64]*list.Element{}}
}

func (l *lru) has(h uint64) bool { _, ok := l.at[h]; return ok }

func (l *lru) add(h uint64) {
	if el, ok := l.at[h]; ok {
		l.order.MoveToFront(el)
		return
	}
	l.at[h] = l.order.PushFront(h)
	if l.order.Len() > l.capacity {
		old := l.order.Back()
		l.order.Remove(old)
		delete(l.at, old.Value.(uint64))
	}
}

// keyTicket is a baseline's ticket: it only names the endpoint.
type keyTicket struct{ key string }

func (t *keyTicket) Endpoint() string    { return t.key }
func (t *keyTicket) FirstToken()         {}
func (t *keyTicket) Progress(int)        {}
func (t *keyTicket) Usage(request.Usage) {}
func (t *keyTicket) Done(error)          {}
