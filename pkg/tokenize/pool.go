package tokenize

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a Tokenizer that asks the pool's own model servers for exact tokens
// (vLLM's /tokenize) and falls back to Approx when none answers within the
// budget: unmatched hashes then only cost cache credit, never correctness.
//
// One call tries endpoints in a rotating order (so one slow or dead endpoint
// is not every call's first try), skipping those that failed within the last
// few budgets while another is available, and spends at most the budget in
// total. Safe for concurrent use.
type Pool struct {
	targets func(model string) []string // base URLs of endpoints serving model
	client  *http.Client
	budget  time.Duration
	next    atomic.Uint64
	exact   atomic.Bool // the latest call was answered by a server
	mu      sync.Mutex
	failed  map[string]time.Time // base URL -> when it last failed
}

// failedFor is how long, in budgets, a failed endpoint is tried last.
const failedFor = 10

// NewPool returns a Pool over targets(model), the base URLs of the healthy
// endpoints serving model (e.g. "http://10.0.0.7:8000"), that spends at most
// budget (v1alpha1 kv.tokenizerTimeout) on one call. A nil client means
// http.DefaultClient.
func NewPool(targets func(model string) []string, client *http.Client, budget time.Duration) *Pool {
	if client == nil {
		client = http.DefaultClient
	}
	return &Pool{targets: targets, client: client, budget: budget, failed: map[string]time.Time{}}
}

// Tokenize appends text's tokens to dst: a server's when one answers in time,
// else the approximation's. It never fails; TokenizeExact says which it was.
func (p *Pool) Tokenize(ctx context.Context, model string, text []byte, dst []uint32) ([]uint32, error) {
	out, _ := p.TokenizeExact(ctx, model, text, dst)
	return out, nil
}

// TokenizeExact is Tokenize reporting whether this call's tokens are exact
// (a server's) or the approximation's.
func (p *Pool) TokenizeExact(ctx context.Context, model string, text []byte, dst []uint32) ([]uint32, bool) {
	ctx, cancel := context.WithTimeout(ctx, p.budget)
	defer cancel()
	order := p.order(p.targets(model), time.Now())
	for i, url := range order {
		try, stop := ctx, context.CancelFunc(func() {})
		if rest := len(order) - i; rest > 1 {
			// Leave at least half of what remains to the others.
			if dl, ok := ctx.Deadline(); ok {
				try, stop = context.WithTimeout(ctx, time.Until(dl)/2)
			}
		}
		out, err := NewRemote(url, p.client).Tokenize(try, model, text, dst)
		stop()
		if err == nil {
			p.exact.Store(true)
			return out, true
		}
		p.markFailed(url, time.Now())
		if ctx.Err() != nil {
			break
		}
	}
	p.exact.Store(false)
	return Approx(dst, view(text)), false
}

// order is urls rotated by a per-call counter, with recently failed ones moved last.
func (p *Pool) order(urls []string, now time.Time) []string {
	if len(urls) == 0 {
		return nil
	}
	start := int(p.next.Add(1) % uint64(len(urls)))
	out := make([]string, 0, len(urls))
	var cold []string
	p.mu.Lock()
	for i := range urls {
		u := urls[(start+i)%len(urls)]
		if at, ok := p.failed[u]; ok && now.Sub(at) < failedFor*p.budget {
			cold = append(cold, u)
			continue
		}
		out = append(out, u)
	}
	p.mu.Unlock()
	return append(out, cold...)
}

func (p *Pool) markFailed(url string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed[url] = now
	for u, at := range p.failed { // keep the map bounded by the recent failures
		if now.Sub(at) >= failedFor*p.budget {
			delete(p.failed, u)
		}
	}
}

// Exact reports whether the latest call's tokens were a server's; false
// before any call and after a fallback. A caller that needs the answer for
// its own call uses TokenizeExact.
func (p *Pool) Exact() bool { return p.exact.Load() }

// Name is "remote".
func (p *Pool) Name() string { return "remote" }
