package scheduler

import (
	"math"
	"sort"
	"sync/atomic"
)

// Picker orders candidates: the first index is the choice, the rest are
// fallbacks in preference order. It returns at most n indices.
type Picker interface {
	Name() string
	Order(r *Request, cands []Candidate, scores []float64, rnd Rand, n int) []int
}

// Rand is the randomness a picker may use. Safe for concurrent use.
type Rand interface {
	IntN(n int) int
	Float64() float64
}

// byScore orders all candidates by score (desc), ties by lower load, then at
// random (a random permutation is sorted stably).
func byScore(cands []Candidate, scores []float64, rnd Rand) []int {
	idx := permutation(len(cands), rnd)
	sort.SliceStable(idx, func(a, b int) bool { return ranksAbove(cands, scores, idx[a], idx[b]) })
	return idx
}

// ranksAbove orders two candidates: higher score first, then lower load.
func ranksAbove(cands []Candidate, scores []float64, i, j int) bool {
	if scores != nil && scores[i] != scores[j] {
		return scores[i] > scores[j]
	}
	return cands[i].loadSignal() < cands[j].loadSignal()
}

// topByScore is firstN(byScore(...), n) without sorting everyone: the best n
// in one pass over a random permutation (earlier wins ties, as in the stable
// sort). A decision wants 1+fallbacks of 100 or more candidates.
func topByScore(cands []Candidate, scores []float64, rnd Rand, n int) []int {
	top := make([]int, 0, n)
	for _, i := range permutation(len(cands), rnd) {
		k := len(top)
		for k > 0 && ranksAbove(cands, scores, i, top[k-1]) {
			k--
		}
		if k >= n {
			continue
		}
		if len(top) < n {
			top = append(top, 0)
		}
		copy(top[k+1:], top[k:len(top)-1]) // the last falls off when full
		top[k] = i
	}
	return top
}

// shuffler is a Rand that shuffles in one call (one lock for a locked source
// instead of one per element).
type shuffler interface {
	Shuffle(n int, swap func(i, j int))
}

func permutation(n int, rnd Rand) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	swap := func(i, j int) { idx[i], idx[j] = idx[j], idx[i] }
	if sh, ok := rnd.(shuffler); ok {
		sh.Shuffle(n, swap)
		return idx
	}
	for i := n - 1; i > 0; i-- {
		swap(i, rnd.IntN(i+1))
	}
	return idx
}

func firstN(idx []int, n int) []int { return idx[:min(n, len(idx))] }

type maxScorePicker struct{ name string }

func (p maxScorePicker) Name() string { return p.name }
func (maxScorePicker) Order(_ *Request, cands []Candidate, scores []float64, rnd Rand, n int) []int {
	return topByScore(cands, scores, rnd, n)
}

// softmaxPicker samples the primary with probability proportional to
// exp(s/T), s being the scores min-max normalised to [0,1]; fallbacks follow
// by score.
type softmaxPicker struct{ temperature float64 }

func (softmaxPicker) Name() string { return "softmax" }
func (p softmaxPicker) Order(_ *Request, cands []Candidate, scores []float64, rnd Rand, n int) []int {
	order := byScore(cands, scores, rnd)
	if p.temperature <= 0 || len(order) < 2 {
		return firstN(order, n)
	}
	hi, lo := scores[order[0]], scores[order[len(order)-1]]
	weights := make([]float64, len(order))
	total := 0.0
	for k, i := range order {
		norm := 1.0
		if hi > lo {
			norm = (scores[i] - lo) / (hi - lo)
		}
		weights[k] = math.Exp((norm - 1) / p.temperature) // shifted by the max for stability
		total += weights[k]
	}
	x := rnd.Float64() * total
	chosen := len(order) - 1
	for k, w := range weights {
		if x < w {
			chosen = k
			break
		}
		x -= w
	}
	order[0], order[chosen] = order[chosen], order[0]
	if chosen > 1 { // keep the remaining fallbacks in score order
		sort.SliceStable(order[1:], func(a, b int) bool { return scores[order[1+a]] > scores[order[1+b]] })
	}
	return firstN(order, n)
}

type randomPicker struct{}

func (randomPicker) Name() string { return "random" }
func (randomPicker) Order(_ *Request, cands []Candidate, _ []float64, rnd Rand, n int) []int {
	return firstN(permutation(len(cands), rnd), n)
}

// roundRobinPicker cycles over the eligible candidates (sorted by key, so the
// cycle is stable while the set is).
type roundRobinPicker struct{ next *atomic.Uint64 }

func (roundRobinPicker) Name() string { return "round-robin" }
func (p roundRobinPicker) Order(_ *Request, cands []Candidate, _ []float64, _ Rand, n int) []int {
	start := int(p.next.Add(1)-1) % len(cands)
	idx := make([]int, 0, min(n, len(cands)))
	for k := 0; k < len(cands) && k < n; k++ {
		idx = append(idx, (start+k)%len(cands))
	}
	return idx
}

// powerOfTwoPicker draws two distinct candidates and takes the less loaded.
type powerOfTwoPicker struct{}

func (powerOfTwoPicker) Name() string { return "power-of-two" }
func (powerOfTwoPicker) Order(_ *Request, cands []Candidate, _ []float64, rnd Rand, n int) []int {
	idx := permutation(len(cands), rnd)
	if len(idx) >= 2 && cands[idx[1]].loadSignal() < cands[idx[0]].loadSignal() {
		idx[0], idx[1] = idx[1], idx[0]
	}
	rest := idx[1:]
	sort.SliceStable(rest, func(a, b int) bool { return cands[rest[a]].loadSignal() < cands[rest[b]].loadSignal() })
	return firstN(idx, n)
}
