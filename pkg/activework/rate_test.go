package activework

import (
	"math"
	"testing"
	"time"
)

// TestPrefillRate: off until a window is set; each dispatch adds its
// uncached tokens over the window, decaying by e per window; a peer's work
// (Add) counts as a local dispatch (Start) does; a cached request adds
// nothing.
func TestPrefillRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := New(time.Minute, nil)
	tr.Start("a", Work{PromptTokens: 3000, UncachedTokens: 3000}, t0)
	if r := tr.PrefillRate("a", t0); r != 0 {
		t.Fatalf("rate %v with the window off", r)
	}
	tr.SetPrefillWindow(10 * time.Second)
	tr.Start("a", Work{PromptTokens: 1000, UncachedTokens: 1000}, t0)
	tr.Add("a", Work{PromptTokens: 2000, UncachedTokens: 1000}, t0) // a peer's decision
	tr.Start("a", Work{PromptTokens: 2000}, t0)                     // all cached
	if r := tr.PrefillRate("a", t0); math.Abs(r-200) > 1e-9 {
		t.Fatalf("rate %v, want 200 tokens/s (2,000 over 10 s)", r)
	}
	if r, want := tr.PrefillRate("a", t0.Add(10*time.Second)), 200/math.E; math.Abs(r-want) > 1e-9 {
		t.Fatalf("rate one window later %v, want %v", r, want)
	}
	tr.Start("a", Work{PromptTokens: 500, UncachedTokens: 500}, t0.Add(10*time.Second))
	if r, want := tr.PrefillRate("a", t0.Add(10*time.Second)), 200/math.E+50; math.Abs(r-want) > 1e-9 {
		t.Fatalf("rate %v, want %v", r, want)
	}
	if r := tr.PrefillRate("b", t0); r != 0 {
		t.Fatalf("an endpoint with nothing dispatched has rate %v", r)
	}
	tr.SetPrefillWindow(0)
	if r := tr.PrefillRate("a", t0); r != 0 {
		t.Fatalf("rate %v after turning the window off", r)
	}
}
