package router

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/scheduler"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// tokenBufs recycles token buffers: tokens only live until the prompt is
// hashed, and long prompts would otherwise allocate hundreds of KB each.
var tokenBufs = sync.Pool{New: func() any { b := make([]uint32, 0, 8192); return &b }}

// maxPooledTokens keeps one huge prompt from pinning a huge buffer in the pool.
const maxPooledTokens = 1 << 18

// Prepared is a request ready for selection: its block chain and the
// request-level facts the scheduler needs.
type Prepared struct {
	Req   scheduler.Request
	Chain []uint64
	// IndexChain is what the KV index sees: every stride-th block of Chain
	// (the chain itself at stride 1). Matches on it count stride blocks each.
	IndexChain []uint64
	Priority   int
	Session    string
	MaxTokens  int
	Model      string
	// view is the block size of each endpoint's prefix view (nil: kv.blockSize for all),
	// sized the prompt's chains at the view's other sizes.
	view  *sizeView
	sized []sizedChain
	// wait is its place in the fleet's queue order (see queueorder.go).
	wait waitState
	// popularCounted: the popular-prefix rule has counted p (popular.go).
	popularCounted bool
	// admittedOn is the endpoint the admission gate reserved p's room on
	// (admitPicked), which choose makes the primary; "" otherwise.
	admittedOn string
	// groupFull: the last Admissible refused p for a reason that holds for
	// every request of its eligibility group (see canDispatch).
	groupFull bool
	// group is its admission item's eligibility group, and pass the release
	// pass asking about it (0 when no pass is: see coldMemo).
	group string
	pass  uint64
}

// Prepare tokenizes and hashes the prompt and reads the routing headers.
func (r *Router) Prepare(ctx context.Context, in *route.Input) (*Prepared, error) {
	p := &Prepared{Priority: r.priority(in.Headers)}
	p.Req.BlockSize = r.cfg.KV.BlockSize
	p.Req.Subset, p.Req.SubsetPresent = in.Subset, in.SubsetPresent
	p.Req.Override = in.Headers[r.cfg.Router.OverrideHeader]
	if r.sched.SessionAffinity() {
		p.Session = in.Headers[r.cfg.Router.Session.Header]
	}
	if in.Request == nil {
		return p, nil
	}
	req := in.Request
	p.Model, p.MaxTokens = req.Model, req.MaxTokens
	p.Req.Model = req.Model
	if r.cfg.Router.LoRA.Enabled && r.isAdapter(req.Model) {
		p.Req.LoRA = req.Model
	}
	tokens := req.PromptTokenIDs
	if len(tokens) == 0 && len(req.Prompt) > 0 {
		start := time.Now()
		buf := tokenBufs.Get().(*[]uint32)
		defer tokenBufs.Put(buf)
		var err error
		tokens, err = r.deps.Tokenizer.Tokenize(ctx, req.Model, req.Prompt, (*buf)[:0])
		if err != nil {
			return nil, fmt.Errorf("tokenize prompt: %w", err)
		}
		if cap(tokens) <= maxPooledTokens {
			*buf = tokens
		}
		telemetry.DecisionStage.WithLabelValues("tokenize").Observe(time.Since(start).Seconds())
	}
	start := time.Now()
	p.Req.PromptTokens = len(tokens)
	seed := kvindex.ChainSeed(req.Model, r.hashAdapter(p), req.CacheSalt)
	p.Chain = kvindex.BlockHashes(make([]uint64, 0, len(tokens)/p.Req.BlockSize), seed, tokens, p.Req.BlockSize)
	p.Req.Blocks = len(p.Chain)
	p.IndexChain = sampleChain(p.Chain, r.stride)
	p.view = r.blockSizes()
	p.sized = hashSized(p.view, seed, tokens)
	telemetry.DecisionStage.WithLabelValues("hash").Observe(time.Since(start).Seconds())
	return p, nil
}

// priority maps the InferenceObjective header to its configured priority.
func (r *Router) priority(h map[string]string) int {
	name := h["x-gateway-inference-objective"]
	if name == "" {
		return 0
	}
	return (*r.objectives.Load())[name]
}

// hashAdapter is the adapter p's blocks are seeded with: its model when that
// names an adapter some endpoint serves, whether or not LoRA routing is on
// (the engine folds the adapter into its blocks either way).
func (r *Router) hashAdapter(p *Prepared) string {
	if p.Req.LoRA != "" || r.cfg.Router.LoRA.Enabled {
		return p.Req.LoRA
	}
	if r.isAdapter(p.Model) {
		return p.Model
	}
	return ""
}

func (r *Router) isAdapter(model string) bool {
	for _, e := range r.deps.Set.Snapshot().List {
		for _, a := range e.LoRAAdapters {
			if a == model {
				return true
			}
		}
	}
	return false
}

// cachedTokens is the prompt prefix that blocks cached leading blocks cover.
func (p *Prepared) cachedTokens(blocks int) int {
	return min(blocks*p.Req.BlockSize, p.Req.PromptTokens)
}

// sampleChain returns every stride-th hash of chain (positions stride-1,
// 2*stride-1, ...); chain itself at stride 1.
func sampleChain(chain []uint64, stride int) []uint64 {
	if stride <= 1 {
		return chain
	}
	out := make([]uint64, len(chain)/stride)
	for i := range out {
		out[i] = chain[(i+1)*stride-1]
	}
	return out
}
