package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

// recorder is a KVSink that keeps every event.
type recorder struct{ events []KVEvent }

func (r *recorder) KVEvents(_ time.Time, evs []KVEvent) { r.events = append(r.events, evs...) }

func (r *recorder) hashes(kind KVEventKind) []uint64 {
	var out []uint64
	for _, ev := range r.events {
		if ev.Kind == kind {
			out = append(out, ev.Hashes...)
		}
	}
	return out
}

func testConfig() Config {
	c := DefaultConfig()
	c.NumGPUBlocks = 64
	c.BlockSize = 4
	c.MaxNumBatchedTokens = 64
	c.MaxNumSeqs = 8
	c.PrefillTokensPerSec = 1000
	c.StepOverhead = time.Millisecond
	c.DecodeCostPerSeq = 100 * time.Microsecond
	c.DecodeCostPerContextToken, c.AttentionLen = 0, 0 // flat costs: hand-checkable steps
	c.DefaultMaxTokens = 4
	return c
}

func newTestEngine(t *testing.T, c Config) (*Engine, *recorder) {
	t.Helper()
	rec := &recorder{}
	e, err := New(c, rec)
	if err != nil {
		t.Fatal(err)
	}
	return e, rec
}

func seqTokens(start, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(start + i)
	}
	return out
}

// drain steps e in virtual time until idle and returns the updates per id.
func drain(t *testing.T, e *Engine, now time.Time) (map[string][]Update, time.Time) {
	t.Helper()
	got := map[string][]Update{}
	for i := 0; !e.Idle(); i++ {
		if i > 10000 {
			t.Fatal("engine did not become idle")
		}
		res := e.Step(now)
		now = now.Add(res.Duration)
		for _, u := range res.Updates {
			got[u.ID] = append(got[u.ID], u)
		}
	}
	return got, now
}

func mustAdd(t *testing.T, e *Engine, r *Request) {
	t.Helper()
	if err := e.Add(r); err != nil {
		t.Fatal(err)
	}
}

func TestPrefixReuseShortensPrefill(t *testing.T) {
	e, _ := newTestEngine(t, testConfig())
	prefix := seqTokens(1000, 32)
	mustAdd(t, e, &Request{ID: "a", Tokens: prefix})
	first := e.Step(t0)
	drain(t, e, t0)
	mustAdd(t, e, &Request{ID: "b", Tokens: append(slices.Clone(prefix), seqTokens(5000, 8)...)})
	second := e.Step(t0)
	if first.PrefillTokens != 32 || second.PrefillTokens != 8 {
		t.Fatalf("prefill tokens: cold %d (want 32), warm %d (want 8)", first.PrefillTokens, second.PrefillTokens)
	}
	if second.Duration >= first.Duration {
		t.Fatalf("warm step %v not shorter than cold %v", second.Duration, first.Duration)
	}
	if u := second.Updates; len(u) != 1 || !u[0].First || u[0].CachedTokens != 32 || u[0].PromptTokens != 40 {
		t.Fatalf("warm first-token update = %+v", u)
	}
	st := e.Stats()
	if st.PrefixQueries != 32+40 || st.PrefixHits != 32 {
		t.Fatalf("prefix counters queries=%d hits=%d, want 72 and 32", st.PrefixQueries, st.PrefixHits)
	}
}

func TestFullyCachedPromptRecomputesLastBlock(t *testing.T) {
	e, _ := newTestEngine(t, testConfig())
	p := seqTokens(1, 16)
	mustAdd(t, e, &Request{ID: "a", Tokens: p})
	drain(t, e, t0)
	mustAdd(t, e, &Request{ID: "b", Tokens: p})
	res := e.Step(t0)
	if res.PrefillTokens != 4 || res.Updates[0].CachedTokens != 12 {
		t.Fatalf("prefill %d cached %d, want 4 and 12", res.PrefillTokens, res.Updates[0].CachedTokens)
	}
}

func TestBatchingRespectsLimits(t *testing.T) {
	tests := []struct{ batched, seqs, n, prompt int }{
		{batched: 64, seqs: 3, n: 10, prompt: 50},
		{batched: 16, seqs: 8, n: 6, prompt: 40},
		{batched: 200, seqs: 2, n: 5, prompt: 7},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("b%d_s%d", tc.batched, tc.seqs), func(t *testing.T) {
			c := testConfig()
			c.MaxNumBatchedTokens, c.MaxNumSeqs, c.NumGPUBlocks = tc.batched, tc.seqs, 1024
			e, _ := newTestEngine(t, c)
			for i := range tc.n {
				mustAdd(t, e, &Request{ID: fmt.Sprint(i), Tokens: seqTokens(i*1000, tc.prompt), MaxTokens: 3})
			}
			sawFull := false
			for i := 0; !e.Idle() && i < 1000; i++ {
				res := e.Step(t0)
				if tok := res.PrefillTokens + res.DecodeSeqs; tok > tc.batched {
					t.Fatalf("step %d: %d tokens > %d", i, tok, tc.batched)
				}
				if st := e.Stats(); st.Running > tc.seqs || res.Scheduled > tc.seqs {
					t.Fatalf("step %d: %d running > %d", i, st.Running, tc.seqs)
				}
				sawFull = sawFull || res.PrefillTokens+res.DecodeSeqs == tc.batched || res.Scheduled == tc.seqs
			}
			if !e.Idle() || !sawFull {
				t.Fatalf("idle=%v, reached a limit=%v", e.Idle(), sawFull)
			}
		})
	}
}

func TestChunkedPrefillTakesSeveralSteps(t *testing.T) {
	c := testConfig()
	c.MaxNumBatchedTokens = 16
	e, _ := newTestEngine(t, c)
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 50), MaxTokens: 1})
	steps := 0
	for !e.Idle() {
		res := e.Step(t0)
		steps++
		if len(res.Updates) > 0 && !res.Updates[0].Finished {
			t.Fatalf("unexpected update %+v", res.Updates[0])
		}
	}
	if steps != 4 { // 16+16+16+2
		t.Fatalf("steps = %d, want 4", steps)
	}
}

func TestEvictionReportsRemovedBlocksLRU(t *testing.T) {
	c := testConfig()
	c.NumGPUBlocks = 8 // 32 tokens
	e, rec := newTestEngine(t, c)
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 16), MaxTokens: 1})
	drain(t, e, t0)
	stored := rec.hashes(BlockStored)
	if len(stored) != 4 {
		t.Fatalf("stored %d blocks, want 4", len(stored))
	}
	// b needs 7 blocks: the 4 never-used blocks go first, then a's tail.
	mustAdd(t, e, &Request{ID: "b", Tokens: seqTokens(100, 28), MaxTokens: 1})
	drain(t, e, t0)
	removed := rec.hashes(BlockRemoved)
	if want := []uint64{stored[3], stored[2], stored[1]}; !slices.Equal(removed, want) {
		t.Fatalf("removed %x, want a's last three blocks tail first %x", removed, want)
	}
	mustAdd(t, e, &Request{ID: "a2", Tokens: seqTokens(0, 16), MaxTokens: 1})
	res := e.Step(t0)
	if got := res.Updates[0].CachedTokens; got != 4 {
		t.Fatalf("a2 cached %d tokens, want 4 (only a's head survived)", got)
	}
}

func TestPreemptionWhenFull(t *testing.T) {
	c := testConfig()
	c.NumGPUBlocks = 10 // 40 tokens
	e, _ := newTestEngine(t, c)
	for i := range 3 {
		mustAdd(t, e, &Request{ID: fmt.Sprint(i), Tokens: seqTokens(i*100, 8), MaxTokens: 12})
	}
	got, _ := drain(t, e, t0)
	if e.Stats().Preemptions == 0 {
		t.Fatal("no preemption although 3x(8+12) tokens exceed 40")
	}
	sawPreempt := false
	for id, ups := range got {
		var toks, firsts int
		for _, u := range ups {
			sawPreempt = sawPreempt || u.Preempted
			if u.HasToken {
				toks++
			}
			if u.First {
				firsts++
			}
		}
		if toks != 12 || firsts != 1 || !ups[len(ups)-1].Finished {
			t.Fatalf("%s: %d tokens, %d firsts, last %+v", id, toks, firsts, ups[len(ups)-1])
		}
	}
	if !sawPreempt {
		t.Fatal("no Preempted update delivered")
	}
	if st := e.Stats(); st.UsedBlocks != 0 {
		t.Fatalf("blocks leaked: %d used", st.UsedBlocks)
	}
}

func TestDeterministic(t *testing.T) {
	run := func(seed int64, hashSeed uint64) ([]uint32, []uint64) {
		c := testConfig()
		c.Seed, c.HashSeed = seed, hashSeed
		e, rec := newTestEngine(t, c)
		mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(7, 20), MaxTokens: 8})
		got, _ := drain(t, e, t0)
		var toks []uint32
		for _, u := range got["a"] {
			toks = append(toks, u.Token)
		}
		return toks, rec.hashes(BlockStored)
	}
	t1, h1 := run(1, 9)
	t2, h2 := run(1, 9)
	t3, h3 := run(2, 10)
	if !slices.Equal(t1, t2) || !slices.Equal(h1, h2) {
		t.Fatal("same seed gave different output")
	}
	if slices.Equal(t1, t3) || slices.Equal(h1, h3) {
		t.Fatal("different seeds gave identical tokens or hashes")
	}
}

func TestBlockStoredChain(t *testing.T) {
	e, rec := newTestEngine(t, testConfig())
	prompt := seqTokens(40, 10)
	mustAdd(t, e, &Request{ID: "a", Tokens: prompt, MaxTokens: 7, LoRA: ""})
	got, _ := drain(t, e, t0)
	// 10 prompt + 6 fed-back outputs = 16 computed tokens = 4 full blocks.
	var all []uint32
	var hashes []uint64
	for i, ev := range rec.events {
		if ev.Kind != BlockStored || ev.BlockSize != 4 || len(ev.Tokens) != 4*len(ev.Hashes) {
			t.Fatalf("event %d malformed: %+v", i, ev)
		}
		if (i == 0) == ev.HasParent || (i > 0 && ev.Parent != hashes[len(hashes)-1]) {
			t.Fatalf("event %d parent linkage wrong: %+v", i, ev)
		}
		all = append(all, ev.Tokens...)
		hashes = append(hashes, ev.Hashes...)
	}
	want := slices.Clone(prompt)
	for _, u := range got["a"][:6] {
		want = append(want, u.Token)
	}
	if !slices.Equal(all, want) {
		t.Fatalf("stored tokens %v, want prompt+outputs %v", all, want)
	}
}

func TestLoRALimit(t *testing.T) {
	c := testConfig()
	c.MaxLoRAs = 1
	e, _ := newTestEngine(t, c)
	mustAdd(t, e, &Request{ID: "x1", Tokens: seqTokens(0, 4), LoRA: "x"})
	mustAdd(t, e, &Request{ID: "y1", Tokens: seqTokens(0, 4), LoRA: "y"})
	mustAdd(t, e, &Request{ID: "x2", Tokens: seqTokens(9, 4), LoRA: "x"})
	e.Step(t0)
	st := e.Stats()
	if st.Running != 2 || st.Waiting != 1 || !slices.Equal(st.RunningLoRAs, []string{"x"}) ||
		!slices.Equal(st.WaitingLoRAs, []string{"y"}) {
		t.Fatalf("stats %+v", st)
	}
	got, _ := drain(t, e, t0)
	if len(got["y1"]) == 0 {
		t.Fatal("y1 never ran")
	}
}

func TestLoRAChangesHashes(t *testing.T) {
	e, rec := newTestEngine(t, testConfig())
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 8), MaxTokens: 1})
	mustAdd(t, e, &Request{ID: "b", Tokens: seqTokens(0, 8), MaxTokens: 1, LoRA: "x"})
	drain(t, e, t0)
	if h := rec.hashes(BlockStored); len(h) != 4 || h[0] == h[2] {
		t.Fatalf("want 4 distinct stored blocks, got %x", h)
	}
}

func TestAbortAndReset(t *testing.T) {
	e, rec := newTestEngine(t, testConfig())
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 12), MaxTokens: 100})
	mustAdd(t, e, &Request{ID: "w", Tokens: seqTokens(50, 12)})
	e.Step(t0)
	if !e.Abort("a") || !e.Abort("w") || e.Abort("nope") {
		t.Fatal("abort results wrong")
	}
	if st := e.Stats(); st.UsedBlocks != 0 || !e.Idle() {
		t.Fatalf("after abort: %+v", st)
	}
	e.ResetCache(t0)
	if last := rec.events[len(rec.events)-1]; last.Kind != AllBlocksCleared {
		t.Fatalf("last event %+v", last)
	}
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 12)})
	if res := e.Step(t0); res.Updates[0].CachedTokens != 0 {
		t.Fatalf("cache survived reset: %+v", res.Updates[0])
	}
}

func TestAddErrors(t *testing.T) {
	e, _ := newTestEngine(t, testConfig())
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 4)})
	tests := []struct {
		r    Request
		want error
	}{
		{Request{ID: "e"}, ErrEmptyPrompt},
		{Request{ID: "a", Tokens: seqTokens(0, 4)}, ErrDuplicateID},
		{Request{ID: "l", Tokens: seqTokens(0, 250), MaxTokens: 8}, ErrTooLong},
	}
	for _, tc := range tests {
		if err := e.Add(&tc.r); !errors.Is(err, tc.want) {
			t.Errorf("Add(%s) = %v, want %v", tc.r.ID, err, tc.want)
		}
	}
}

func TestStepDuration(t *testing.T) {
	e, _ := newTestEngine(t, testConfig())
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 40), MaxTokens: 3})
	if d := e.Step(t0).Duration; d != time.Millisecond+40*time.Millisecond {
		t.Fatalf("prefill step %v, want 41ms", d)
	}
	if d := e.Step(t0).Duration; d != time.Millisecond+100*time.Microsecond {
		t.Fatalf("decode step %v, want 1.1ms", d)
	}
	if e.Idle() {
		t.Fatal("idle too early")
	}
}

// TestStepDurationGrowsWithContext pins the long-context costs on the
// defaults: a 12k-token prompt's prefill costs 20 % more per token than a
// short one, and a request decoding with 12k tokens of context adds ~0.47ms.
func TestStepDurationGrowsWithContext(t *testing.T) {
	c := DefaultConfig()
	for _, tc := range []struct {
		start, n int
		want     float64
	}{
		{0, 100, 100 * (1 + 100.0/60000)},
		{0, 12000, 12000 * 1.2},
		{0, 40000, 40000 * (1 + 40000.0/60000)},
		{8192, 3808, (12000*12000-8192*8192)/60000.0 + 3808}, // a later chunk pays for the earlier context
	} {
		if got := c.prefillWork(tc.start, tc.n); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("prefillWork(%d, %d) = %v, want %v", tc.start, tc.n, got, tc.want)
		}
	}
	c.NumGPUBlocks, c.MaxNumBatchedTokens = 2000, 16384
	e, _ := newTestEngine(t, c)
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 12000), MaxTokens: 3})
	e.Step(t0) // the whole prompt in one chunk
	got := e.Step(t0).Duration
	want := c.StepOverhead + c.DecodeCostPerSeq + 12000*39*time.Nanosecond // the KV held: the prompt (the new token is computed in this step)
	if got != want {
		t.Fatalf("decode step with 12k context %v, want %v", got, want)
	}
}

func TestOutputVocab(t *testing.T) {
	e, _ := newTestEngine(t, testConfig())
	vocab := []uint32{70001, 70002, 70003}
	e.SetOutputVocab(vocab)
	mustAdd(t, e, &Request{ID: "a", Tokens: seqTokens(0, 5), MaxTokens: 10})
	got, _ := drain(t, e, t0)
	for _, u := range got["a"] {
		if !slices.Contains(vocab, u.Token) {
			t.Fatalf("token %d not from vocab", u.Token)
		}
	}
}

// A request admitted in the same step as the one computing its prefix hits
// that prefix, as in vLLM (allocate_slots caches the blocks a step schedules),
// and so does one admitted while the prefix is computed chunk by chunk.
func TestPrefixScheduledThisStepIsShared(t *testing.T) {
	prefix := seqTokens(1000, 32)
	tests := []struct {
		name       string
		budget     int
		wantCached int
	}{
		{"same step", 64, 32},
		{"same step, b chunked", 40, 32},
		{"while a is chunked", 20, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig()
			c.MaxNumBatchedTokens = tt.budget
			e, _ := newTestEngine(t, c)
			mustAdd(t, e, &Request{ID: "a", Tokens: slices.Concat(prefix, seqTokens(9000, 4))})
			mustAdd(t, e, &Request{ID: "b", Tokens: slices.Concat(prefix, seqTokens(5000, 8))})
			got, _ := drain(t, e, t0)
			if u := got["b"][0]; u.CachedTokens != tt.wantCached {
				t.Fatalf("b cached %d tokens, want %d (the prefix a computes)", u.CachedTokens, tt.wantCached)
			}
			if st := e.Stats(); st.PromptTokens != int64(36+8) {
				t.Fatalf("prompt tokens computed %d, want %d (the prefix once)", st.PromptTokens, 36+8)
			}
		})
	}
}
