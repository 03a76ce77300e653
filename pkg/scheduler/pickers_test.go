package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvpick/kvpick/pkg/activework"
)

// TestTopByScoreMatchesFullOrder: the one-pass top-n is the head of the full stable order, ties and load
// tie-breaks included, for the same random source.
func TestTopByScoreMatchesFullOrder(t *testing.T) {
	gen := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		m := 1 + gen.IntN(40)
		cands := make([]Candidate, m)
		var scores []float64
		if trial%5 != 0 { // some rounds without scores: load alone orders
			scores = make([]float64, m)
		}
		for i := range cands {
			cands[i].Active = activework.Counts{Requests: gen.IntN(3)}
			if scores != nil {
				scores[i] = float64(gen.IntN(4)) // few values: many ties
			}
		}
		for _, n := range []int{1, 3, m, m + 2} {
			seed := gen.Uint64()
			a := &lockedRand{r: rand.New(rand.NewPCG(seed, 0))}
			b := &lockedRand{r: rand.New(rand.NewPCG(seed, 0))}
			got := topByScore(cands, scores, a, n)
			want := firstN(byScore(cands, scores, b), n)
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d n=%d: top %v, full order head %v", trial, n, got, want)
			}
		}
	}
}
