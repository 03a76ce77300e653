package activework

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLifecycleCounts(t *testing.T) {
	var notified atomic.Int32
	tr := New(time.Minute, func() { notified.Add(1) })
	now := time.Unix(1000, 0)
	// 100-token prompt, 36 cached: 64 to prefill; 100+20 tokens = 8 blocks of 16.
	h := tr.Add("a", Work{PromptTokens: 100, UncachedTokens: 64, ExpectedOutput: 20, BlockSize: 16}, now)
	steps := []struct {
		name string
		do   func()
		want Counts
	}{
		// Pending: all 8 blocks until the first token (the request may wait in the engine's queue, holding none).
		{"added", func() {}, Counts{PrefillTokens: 64, DecodeBlocks: 8, Requests: 1, ContextTokens: 100, PendingBlocks: 8}},
		{"first token", func() { h.PrefillDone(now) }, Counts{PrefillTokens: 0, DecodeBlocks: 8, Requests: 1, ContextTokens: 100}},
		{"within reservation", func() { h.Progress(10, now) }, Counts{DecodeBlocks: 8, Requests: 1, ContextTokens: 110}},
		{"past reservation", func() { h.Progress(60, now) }, Counts{DecodeBlocks: 10, Requests: 1, ContextTokens: 160}},
		{"freed", h.Free, Counts{}},
		{"double free", h.Free, Counts{}},
		{"progress after free", func() { h.Progress(500, now) }, Counts{}},
	}
	for _, s := range steps {
		s.do()
		if got := tr.Counts("a"); got != s.want {
			t.Fatalf("%s: counts %+v, want %+v", s.name, got, s.want)
		}
	}
	if notified.Load() != 2 {
		t.Fatalf("onChange ran %d times, want 2 (prefill done, free)", notified.Load())
	}
	if tr.InFlight() != 0 {
		t.Fatal("in flight not zero")
	}
}

func TestExpireOrphans(t *testing.T) {
	tr := New(300*time.Second, nil)
	t0 := time.Unix(0, 0)
	old := tr.Add("a", Work{PromptTokens: 16, UncachedTokens: 16}, t0)
	young := tr.Add("a", Work{PromptTokens: 16, UncachedTokens: 16}, t0.Add(200*time.Second))
	if n := tr.Expire(t0.Add(301 * time.Second)); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	if c := tr.Counts("a"); c.Requests != 1 || c.PrefillTokens != 16 {
		t.Fatalf("counts %+v", c)
	}
	young.Progress(1, t0.Add(490*time.Second)) // activity keeps it alive
	if n := tr.Expire(t0.Add(600 * time.Second)); n != 0 {
		t.Fatalf("expired active handle")
	}
	old.Free()
	young.Free()
}

func TestConcurrentBalance(t *testing.T) {
	tr := New(time.Minute, nil)
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ep := []string{"a", "b"}[i%2]
			for j := 0; j < 200; j++ {
				h := tr.Add(ep, Work{PromptTokens: 64, UncachedTokens: 32, BlockSize: 16}, time.Now())
				_ = tr.Counts(ep)
				h.PrefillDone(time.Now())
				h.Progress(j, time.Now())
				h.Free()
			}
		}(i)
	}
	wg.Wait()
	for _, ep := range []string{"a", "b"} {
		if c := tr.Counts(ep); c != (Counts{}) {
			t.Fatalf("%s leaked %+v", ep, c)
		}
	}
}

func TestSharedPromptBlocksCountOnce(t *testing.T) {
	tr := New(time.Minute, nil)
	now := time.Unix(0, 0)
	shared := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// 170-token prompts: 10 full blocks (the shared chain) + a private partial
	// block; 16 output tokens reserved: blocks(186) = 12, so 2 private.
	a := tr.Add("e", Work{PromptTokens: 170, ExpectedOutput: 16, BlockSize: 16, Blocks: shared}, now)
	if got := tr.Counts("e").DecodeBlocks; got != 12 {
		t.Fatalf("one request: %d blocks, want 12", got)
	}
	b := tr.Add("e", Work{PromptTokens: 170, ExpectedOutput: 16, BlockSize: 16, Blocks: shared}, now)
	if got := tr.Counts("e").DecodeBlocks; got != 14 {
		t.Fatalf("two requests sharing 10 blocks: %d, want 10 shared + 2x2 private = 14", got)
	}
	other := tr.Add("f", Work{PromptTokens: 170, ExpectedOutput: 16, BlockSize: 16, Blocks: shared}, now)
	if got := tr.Counts("f").DecodeBlocks; got != 12 {
		t.Fatalf("sharing is per endpoint: %d, want 12", got)
	}
	a.Free()
	if got := tr.Counts("e").DecodeBlocks; got != 12 {
		t.Fatalf("after one frees: %d, want 12", got)
	}
	b.Free()
	other.Free()
	if c := tr.Counts("e"); c != (Counts{}) {
		t.Fatalf("leak: %+v", c)
	}
}

// TestSegmentCounting: shared prompt blocks are counted per segment of segBlocks; chains that part inside a
// segment count that segment once each (the documented over-count, at most segBlocks-1 per request).
func TestSegmentCounting(t *testing.T) {
	tests := []struct {
		name   string
		chains [][]uint64
		want   int // DecodeBlocks with no output or partial blocks (PromptTokens = 16 x blocks)
	}{
		{"one chain", [][]uint64{chain(0, 20, 1)}, 20},
		{"identical", [][]uint64{chain(20, 20, 1), chain(20, 20, 2)}, 20},
		{"disjoint", [][]uint64{chain(0, 10, 1), chain(0, 10, 2)}, 20},
		{"part at a segment edge", [][]uint64{chain(16, 24, 1), chain(16, 24, 2)}, 16 + 8 + 8},
		{"part inside a segment", [][]uint64{chain(12, 24, 1), chain(12, 24, 2)}, 24 + 16}, // exact: 12+12+12 = 36
		{"prefix of the other", [][]uint64{chain(0, 20, 1), chain(0, 30, 1)}, 20 + 6 + 8},  // exact: 30
		{"empty chains add nothing", [][]uint64{chain(0, 10, 1), {}, nil}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(time.Minute, nil)
			var hs []*Handle
			for _, c := range tc.chains {
				hs = append(hs, tr.Add("e", Work{PromptTokens: 16 * len(c), BlockSize: 16, Blocks: c}, time.Unix(0, 0)))
			}
			if got := tr.Counts("e").DecodeBlocks; got != tc.want {
				t.Fatalf("DecodeBlocks = %d, want %d", got, tc.want)
			}
			for i := len(hs) - 1; i >= 0; i-- { // free in reverse: the other order is TestSharedPromptBlocksCountOnce's
				hs[i].Free()
			}
			if c := tr.Counts("e"); c != (Counts{}) {
				t.Fatalf("leak after free: %+v", c)
			}
		})
	}
}

// TestStartThenHold: Start counts the request and its prefill at once; the shared prompt blocks land with Hold,
// and Free releases exactly what was counted whether or not Hold ran.
func TestStartThenHold(t *testing.T) {
	shared := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	w := Work{PromptTokens: 170, UncachedTokens: 170, ExpectedOutput: 16, BlockSize: 16, Blocks: shared}
	for _, hold := range []bool{true, false} {
		tr := New(time.Minute, nil)
		h := tr.Start("e", w, time.Unix(0, 0))
		if got, want := tr.Counts("e"), (Counts{PrefillTokens: 170, DecodeBlocks: 2, Requests: 1, ContextTokens: 170, PendingBlocks: 12}); got != want {
			t.Fatalf("after Start: %+v, want %+v", got, want)
		}
		if hold {
			h.Hold()
			h.Hold() // idempotent
			if got := tr.Counts("e").DecodeBlocks; got != 12 {
				t.Fatalf("after Hold: %d blocks, want 12", got)
			}
		}
		h.Free()
		h.Hold() // after Free: nothing
		if c := tr.Counts("e"); c != (Counts{}) || tr.InFlight() != 0 {
			t.Fatalf("hold=%v: leak %+v, in flight %d", hold, c, tr.InFlight())
		}
	}
}

// TestHeldBlocksCountOnlyKVHoldingWork: a request waiting for its prefill
// holds no KV as far as the busy threshold is concerned; once its first
// token came, all its blocks count.
func TestHeldBlocksCountOnlyKVHoldingWork(t *testing.T) {
	tr := New(time.Minute, nil)
	now := time.Unix(0, 0)
	a := tr.Add("e", Work{PromptTokens: 64, UncachedTokens: 64, BlockSize: 16}, now) // 4 blocks
	b := tr.Add("e", Work{PromptTokens: 32, UncachedTokens: 32, BlockSize: 16}, now) // 2 blocks
	if got := tr.Counts("e").HeldBlocks(); got != 0 {
		t.Fatalf("two queued requests hold %d blocks, want 0", got)
	}
	a.PrefillDone(now)
	if got := tr.Counts("e").HeldBlocks(); got != 4 {
		t.Fatalf("after a's first token: %d held, want 4", got)
	}
	b.PrefillDone(now)
	a.Free()
	if got := tr.Counts("e").HeldBlocks(); got != 2 {
		t.Fatalf("after b's first token and a's end: %d held, want 2", got)
	}
}

// Under Defer, frees and prefill completions notify once, when the last
// Defer ends, and only if something changed.
func TestDeferCoalescesNotifications(t *testing.T) {
	var notified atomic.Int32
	tr := New(time.Minute, func() { notified.Add(1) })
	now := time.Unix(1000, 0)
	w := Work{PromptTokens: 32, UncachedTokens: 32, BlockSize: 16}
	h1, h2 := tr.Add("a", w, now), tr.Add("a", w, now)
	for _, c := range []struct {
		name string
		run  func()
		want int32
	}{
		{"nothing changed", func() { tr.Defer()() }, 0},
		{"two changes, one notification", func() {
			done := tr.Defer()
			h1.PrefillDone(now)
			h1.Free()
			if n := notified.Load(); n != 0 {
				t.Fatalf("notified %d times while deferred", n)
			}
			done()
		}, 1},
		{"nested: the outer end notifies", func() {
			outer := tr.Defer()
			inner := tr.Defer()
			h2.Free()
			inner()
			if n := notified.Load(); n != 0 {
				t.Fatalf("notified %d times before the outer Defer ended", n)
			}
			outer()
		}, 1},
		{"not deferred: at once", func() { tr.Add("a", w, now).Free() }, 1},
	} {
		notified.Store(0)
		c.run()
		if got := notified.Load(); got != c.want {
			t.Errorf("%s: notified %d times, want %d", c.name, got, c.want)
		}
	}
}

// A change made while a Defer ends is never lost: after every goroutine is
// done, at least one notification followed the last change.
func TestDeferLosesNoChange(t *testing.T) {
	for range 200 {
		var notified atomic.Int32
		tr := New(time.Minute, func() { notified.Add(1) })
		h := tr.Add("a", Work{PromptTokens: 16, UncachedTokens: 16, BlockSize: 16}, time.Unix(0, 0))
		done := tr.Defer()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); h.Free() }()
		go func() { defer wg.Done(); done() }()
		wg.Wait()
		if notified.Load() == 0 {
			t.Fatal("a free racing the end of a Defer was never notified")
		}
	}
}

// TestSharers: requests in flight holding a prefix are counted by its last
// whole segment, per endpoint, until they free.
func TestSharers(t *testing.T) {
	tr := New(time.Minute, nil)
	now := time.Unix(0, 0)
	a, b := chain(20, 30, 1), chain(20, 30, 2) // share 20 blocks: segments 0 and 1 whole, 2 parts
	var hs []*Handle
	for _, c := range [][]uint64{a, b, chain(0, 30, 3)} {
		hs = append(hs, tr.Add("e", Work{PromptTokens: 16 * len(c), BlockSize: 16, Blocks: c}, now))
	}
	hs = append(hs, tr.Add("f", Work{PromptTokens: 16 * len(a), BlockSize: 16, Blocks: a}, now))
	cases := []struct {
		name     string
		endpoint string
		n, want  int
	}{
		{"under one segment", "e", 7, 0},
		{"first segment", "e", 8, 2},
		{"shared part", "e", 20, 2},
		{"past the parting", "e", 24, 1},
		{"longer than the chain", "e", 99, 1},
		{"other endpoint", "f", 20, 1},
		{"unknown endpoint", "g", 20, 0},
	}
	for _, c := range cases {
		if got := tr.Sharers(c.endpoint, a, c.n); got != c.want {
			t.Errorf("%s: Sharers(%s, a, %d) = %d, want %d", c.name, c.endpoint, c.n, got, c.want)
		}
	}
	hs[1].Free()
	if got := tr.Sharers("e", a, 16); got != 1 {
		t.Fatalf("after b frees: %d sharers, want 1", got)
	}
}

// chain is an n-block hash chain whose first prefix blocks every chain
// shares and whose rest are tagged (chains with different tags part there).
func chain(prefix, n int, tag uint64) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = uint64(i + 1)
		if i >= prefix {
			c[i] = tag<<32 | uint64(i+1)
		}
	}
	return c
}

// TestJoined: a request sees the uncached tokens started on its endpoint
// after it, by this picker (Start) or a peer (Add), and nothing started
// before it or elsewhere; a fully cached request adds nothing.
func TestJoined(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := New(time.Minute, nil)
	tr.Start("a", Work{PromptTokens: 4000, UncachedTokens: 4000}, t0)
	first := tr.Start("a", Work{PromptTokens: 1000, UncachedTokens: 600}, t0)
	if j := first.Joined(); j != 0 {
		t.Fatalf("joined %d before anything came after it", j)
	}
	tr.Start("b", Work{PromptTokens: 3000, UncachedTokens: 3000}, t0) // elsewhere
	tr.Start("a", Work{PromptTokens: 2000}, t0)                       // all cached
	if j := first.Joined(); j != 0 {
		t.Fatalf("joined %d from another endpoint's or a cached request", j)
	}
	second := tr.Start("a", Work{PromptTokens: 1500, UncachedTokens: 700}, t0)
	tr.Add("a", Work{PromptTokens: 900, UncachedTokens: 900}, t0) // a peer's decision
	if j := first.Joined(); j != 1600 {
		t.Fatalf("joined %d, want 1,600 (700 here, 900 from a peer)", j)
	}
	if j := second.Joined(); j != 900 {
		t.Fatalf("second joined %d, want 900", j)
	}
	first.PrefillDone(t0)
	first.Free()
	if j := first.Joined(); j != 1600 {
		t.Fatalf("joined %d after its end, want it unchanged at 1,600", j)
	}
}
