package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/apierr"
)

// Scheduler runs one profile: filters, weighted scorers, a picker. Safe for
// concurrent use; build a new one to change configuration.
type Scheduler struct {
	busy      Busy
	mode      string
	fallbacks int
	filters   []Filter
	eligible  []Filter // the filters without busy: what admission looks at
	scorers   []weighted
	picker    Picker
	rnd       Rand
	direct    bool
	session   bool
}

type weighted struct {
	Scorer
	weight float64
}

// New builds the scheduler for a validated, defaulted router config.
func New(cfg v1.Router) (*Scheduler, error) {
	s := &Scheduler{mode: cfg.Mode, fallbacks: *cfg.Fallbacks, rnd: newRand(cfg.Seed)}
	busy := Busy{DecodeBlocksFrac: cfg.Busy.ActiveDecodeBlocks, PrefillTokens: cfg.Busy.ActivePrefillTokens,
		PrefillTokensFrac: cfg.Busy.ActivePrefillTokensFrac}
	s.busy = busy
	if err := s.setFilters([]string{v1.FilterModel, v1.FilterSubset, v1.FilterHealth, v1.FilterBusy}, busy); err != nil {
		return nil, err
	}
	kv := kvCostFor(cfg.KVCost)
	rr := roundRobinPicker{next: new(atomic.Uint64)}
	switch cfg.Mode {
	case v1.ModeRoundRobin:
		s.picker = rr
	case v1.ModeRandom:
		s.picker = randomPicker{}
	case v1.ModeLeastLoaded:
		s.scorers = []weighted{{activeRequestsScorer, 1}}
		s.picker = maxScorePicker{"least-loaded"}
	case v1.ModePowerOfTwo:
		s.picker = powerOfTwoPicker{}
	case v1.ModeKV:
		s.scorers = []weighted{{kv, 1}}
		s.picker, _ = pickerFor(v1.PickerSoftmax, *cfg.KVCost.Temperature, rr)
	case v1.ModeDirect:
		s.direct = true
	case v1.ModeDeviceAware:
		s.picker = deviceAwarePicker{label: cfg.DeviceAware.Label, weights: cfg.DeviceAware.Weights}
	case v1.ModeCustom:
		if err := s.applyProfile(cfg.Profile, busy, kv, rr); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("router.mode: unknown mode %q", cfg.Mode)
	}
	s.session = cfg.Session.Header != "" && (!cfg.LoRA.Enabled || cfg.Mode == v1.ModeKV)
	return s, nil
}

// WantsSharers reports whether a scorer reads Candidate.Sharers: the time
// model's hot-prefix rule (router.kvCost.hotPrefixRequests).
func (s *Scheduler) WantsSharers() bool {
	t, ok := s.timeCost()
	return ok && t.HotRequests > 0
}

// PricesByTime reports whether a scorer prices by the time model, which reads
// Request.Popular (router.kvCost.popularShare).
func (s *Scheduler) PricesByTime() bool {
	_, ok := s.timeCost()
	return ok
}

// timeCost returns the time model of the first scorer that prices by it.
func (s *Scheduler) timeCost() (TimeCost, bool) {
	for _, w := range s.scorers {
		if c, ok := w.Scorer.(costScorer); ok && c.blocks == nil {
			return c.t, true
		}
	}
	return TimeCost{}, false
}

func (s *Scheduler) applyProfile(p *v1.Profile, busy Busy, kv Scorer, rr roundRobinPicker) error {
	if p == nil {
		return fmt.Errorf("router.profile: required for mode custom")
	}
	if len(p.Filters) > 0 {
		if err := s.setFilters(p.Filters, busy); err != nil {
			return err
		}
	}
	for _, w := range p.Scorers {
		sc, err := scorerFor(w.Name, kv)
		if err != nil {
			return err
		}
		s.scorers = append(s.scorers, weighted{sc, w.Weight})
	}
	var err error
	s.picker, err = pickerFor(p.Picker, p.Temperature, rr)
	return err
}

func (s *Scheduler) setFilters(names []string, busy Busy) error {
	s.filters, s.eligible = nil, nil
	for _, n := range names {
		f, err := filterFor(n, busy)
		if err != nil {
			return err
		}
		s.filters = append(s.filters, f)
		if n != v1.FilterBusy {
			s.eligible = append(s.eligible, f)
		}
	}
	return nil
}

// filterFor is the filter named name; an unknown name is an error, never a
// silent default.
func filterFor(name string, busy Busy) (Filter, error) {
	switch name {
	case v1.FilterModel:
		return modelFilter{}, nil
	case v1.FilterSubset:
		return subsetFilter{}, nil
	case v1.FilterHealth:
		return healthFilter{}, nil
	case v1.FilterBusy:
		return busyFilter{busy}, nil
	}
	return nil, fmt.Errorf("router.profile: unknown filter %q", name)
}

func scorerFor(name string, kv Scorer) (Scorer, error) {
	switch name {
	case v1.ScorerKVCost:
		return kv, nil
	case v1.ScorerKVOverlap:
		return kvOverlapScorer{}, nil
	case v1.ScorerPrefillTokens:
		return prefillTokensScorer, nil
	case v1.ScorerDecodeBlocks:
		return decodeBlocksScorer, nil
	case v1.ScorerQueueDepth:
		return queueDepthScorer, nil
	case v1.ScorerKVUtilization:
		return kvUtilizationScorer{}, nil
	case v1.ScorerActiveRequests:
		return activeRequestsScorer, nil
	case v1.ScorerLoRAAffinity:
		return loraAffinityScorer{}, nil
	case v1.ScorerSession:
		return sessionScorer{}, nil
	}
	return nil, fmt.Errorf("router.profile: unknown scorer %q", name)
}

// pickerFor is the picker named name; an unknown name is an error.
func pickerFor(name string, temperature float64, rr roundRobinPicker) (Picker, error) {
	switch name {
	case v1.PickerSoftmax:
		if temperature > 0 {
			return softmaxPicker{temperature}, nil
		}
		return maxScorePicker{"lowest-cost"}, nil
	case v1.PickerRandom:
		return randomPicker{}, nil
	case v1.PickerRoundRobin:
		return rr, nil
	case v1.PickerLowestCost:
		return maxScorePicker{"lowest-cost"}, nil
	case v1.PickerMaxScore:
		return maxScorePicker{"max-score"}, nil
	}
	return nil, fmt.Errorf("router.profile: unknown picker %q", name)
}

// Plugins names the profile in use (filters, weighted scorers, picker), for
// the start-up log.
func (s *Scheduler) Plugins() (filters, scorers []string, picker string) {
	for _, f := range s.filters {
		filters = append(filters, f.Name())
	}
	for _, w := range s.scorers {
		scorers = append(scorers, fmt.Sprintf("%s*%g", w.Name(), w.weight))
	}
	if s.picker != nil {
		picker = s.picker.Name()
	}
	return filters, scorers, picker
}

// Mode is the router mode this scheduler implements.
func (s *Scheduler) Mode() string { return s.mode }

// SessionAffinity reports whether session pins apply in this configuration
// (with LoRA serving they do only in kv mode).
func (s *Scheduler) SessionAffinity() bool { return s.session }

// Busy reports whether c is past a busy threshold.
func (s *Scheduler) Busy(c *Candidate) bool { return s.busy.IsBusy(c) }

// Eligible applies every filter except the busy thresholds: the endpoints
// admission weighs. It filters cands in place.
func (s *Scheduler) Eligible(r *Request, cands []Candidate) ([]Candidate, error) {
	return runFilters(s.eligible, r, cands)
}

func runFilters(fs []Filter, r *Request, cands []Candidate) ([]Candidate, error) {
	if len(cands) == 0 {
		return nil, apierr.Unavailable("no endpoints in the pool")
	}
	var err error
	for _, f := range fs {
		if cands, err = f.Filter(r, cands); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// Schedule picks endpoints for r among cands (reordered and filtered in
// place). It returns the chosen candidates, primary first, then fallbacks.
func (s *Scheduler) Schedule(r *Request, cands []Candidate) ([]Candidate, Result, error) {
	if s.direct {
		return s.scheduleDirect(r, cands)
	}
	cands, err := runFilters(s.filters, r, cands)
	if err != nil {
		return nil, Result{}, err
	}
	var scores []float64
	if len(s.scorers) > 0 {
		scores = s.score(r, cands)
	}
	res := Result{Scores: scores, Order: s.picker.Order(r, cands, scores, s.rnd, 1+s.fallbacks)}
	res.Pinned = pin(&res, r, cands)
	out := make([]Candidate, len(res.Order))
	for k, i := range res.Order {
		out[k] = cands[i]
	}
	return out, res, nil
}

func (s *Scheduler) score(r *Request, cands []Candidate) []float64 {
	total := make([]float64, len(cands))
	tmp := make([]float64, len(cands))
	for _, sc := range s.scorers {
		sc.Score(r, cands, tmp)
		for i, v := range tmp {
			total[i] += sc.weight * v
		}
	}
	return total
}

// pin moves the session's endpoint to the front when it is still eligible.
func pin(res *Result, r *Request, cands []Candidate) bool {
	if r.Pinned == "" {
		return false
	}
	for i := range cands {
		if cands[i].Key() != r.Pinned {
			continue
		}
		order := []int{i}
		for _, j := range res.Order {
			if j != i && len(order) < len(res.Order) {
				order = append(order, j)
			}
		}
		res.Order = order
		return true
	}
	return false
}

func (s *Scheduler) scheduleDirect(r *Request, cands []Candidate) ([]Candidate, Result, error) {
	if r.Override == "" {
		return nil, Result{}, apierr.BadRequest("direct mode: the request names no endpoint (override header missing)")
	}
	for i := range cands {
		if cands[i].Key() != r.Override {
			continue
		}
		if r.SubsetPresent && !slices.Contains(r.Subset, r.Override) {
			return nil, Result{}, apierr.Unavailable("direct mode: endpoint %s is not in the subset hint %v", r.Override, r.Subset)
		}
		return []Candidate{cands[i]}, Result{Order: []int{i}}, nil
	}
	return nil, Result{}, apierr.BadRequest("direct mode: endpoint %q is not in the pool", r.Override)
}

// lockedRand makes a seeded generator safe for concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

// Shuffle permutes under one lock.
func (l *lockedRand) Shuffle(n int, swap func(i, j int)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.Shuffle(n, swap)
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

type globalRand struct{}

func (globalRand) IntN(n int) int   { return rand.IntN(n) }
func (globalRand) Float64() float64 { return rand.Float64() }

// Shuffle permutes with the global source.
func (globalRand) Shuffle(n int, swap func(i, j int)) { rand.Shuffle(n, swap) }

func newRand(seed int64) Rand {
	if seed == 0 {
		return globalRand{}
	}
	return &lockedRand{r: rand.New(rand.NewPCG(uint64(seed), 0x6b7670))}
}
