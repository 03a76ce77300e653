package scheduler

import (
	"errors"
	"strings"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// fleet builds candidates for endpoints 10.0.0.<i>:8000 with the given active
// work and cached blocks.
func fleet(t *testing.T, specs ...cand) []Candidate {
	t.Helper()
	set := endpoints.NewSet()
	var eps []endpoints.Endpoint
	for i, s := range specs {
		eps = append(eps, endpoints.Endpoint{Address: "10.0.0." + string(rune('1'+i)), Port: 8000,
			Models: s.models, Labels: s.labels, Capacity: endpoints.Capacity{TotalBlocks: s.total, MaxBatchedTokens: 8192}})
	}
	if err := set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	out := make([]Candidate, len(specs))
	for i, e := range set.Snapshot().List {
		out[i] = Candidate{Entry: e, Capacity: e.Capacity(), Active: specs[i].active, CachedBlocks: specs[i].cached, Load: specs[i].load}
	}
	return out
}

type cand struct {
	active activework.Counts
	cached int
	total  int
	models []string
	labels map[string]string
	load   endpoints.Load
}

func router(mode string, mut ...func(*v1.Router)) v1.Router {
	c := v1.Default()
	c.Router.Mode = mode
	c.Router.Seed = 7
	for _, m := range mut {
		m(&c.Router)
	}
	return c.Router
}

func mustNew(t *testing.T, r v1.Router) *Scheduler {
	t.Helper()
	s, err := New(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKVCostHandComputed(t *testing.T) {
	k := KVCost{OverlapWeight: 1}
	r := &Request{PromptTokens: 1600, Blocks: 100, BlockSize: 16}
	cases := []struct {
		name string
		c    Candidate
		want float64
	}{
		// prefill 1600/16 = 100 blocks; decode 0 + 100 new blocks.
		{"idle, nothing cached", Candidate{}, 200},
		// 60 blocks cached: prefill (1600-960)/16 = 40; decode 40 new blocks.
		{"idle, 60 blocks cached", Candidate{CachedBlocks: 60}, 80},
		// backlog 3200 prefill tokens (200 blocks) + 50 decode blocks.
		{"busy, all cached", Candidate{CachedBlocks: 100, Active: activework.Counts{PrefillTokens: 3200, DecodeBlocks: 50}}, 250},
	}
	for _, tc := range cases {
		if got := k.Cost(r, &tc.c); got != tc.want {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
	// The active-request term and the overlap weight scale as documented.
	k2 := KVCost{OverlapWeight: 2, ActiveRequestWeight: 10}
	if got := k2.Cost(r, &Candidate{Active: activework.Counts{Requests: 3}}); got != 2*100+100+30 {
		t.Errorf("weighted cost %v", got)
	}
}

func TestKVPrefersCacheUnlessBacklogOutweighsIt(t *testing.T) {
	s := mustNew(t, router(v1.ModeKV))
	r := &Request{PromptTokens: 6000, Blocks: 375, BlockSize: 16}
	// A holds the whole prefix but has a 20,000-token prefill backlog (1250 blocks);
	// B is idle and cold (750). The backlog outweighs the saving: B.
	cands := fleet(t, cand{cached: 375, active: activework.Counts{PrefillTokens: 20000}}, cand{})
	got, _, err := s.Schedule(r, cands)
	if err != nil || got[0].Key() != "10.0.0.2:8000" {
		t.Fatalf("want the idle cold endpoint, got %v err %v", keys(got), err)
	}
	// With a small backlog (2,000 tokens = 125 blocks) the cache wins: A costs 125, B 750.
	cands = fleet(t, cand{cached: 375, active: activework.Counts{PrefillTokens: 2000}}, cand{})
	got, _, _ = s.Schedule(r, cands)
	if got[0].Key() != "10.0.0.1:8000" || got[1].Key() != "10.0.0.2:8000" {
		t.Fatalf("want the cached endpoint then the fallback, got %v", keys(got))
	}
}

func TestFiltersAndErrors(t *testing.T) {
	decodeFull := cand{total: 100, active: activework.Counts{DecodeBlocks: 101}}
	decodeQueued := cand{total: 100, active: activework.Counts{DecodeBlocks: 101, PendingBlocks: 60}} // 41 held
	cases := []struct {
		name       string
		specs      []cand
		req        Request
		mut        func(*v1.Router)
		wantStatus int
		wantType   string
		wantMsg    string
		wantKeys   []string
	}{
		{name: "empty pool", req: Request{Model: "m"}, wantStatus: 503, wantMsg: "no endpoints in the pool"},
		{name: "unknown model", specs: []cand{{models: []string{"a"}}}, req: Request{Model: "b"}, wantStatus: 404, wantMsg: `model "b"`},
		{name: "empty subset", specs: []cand{{}}, req: Request{SubsetPresent: true}, wantStatus: 503, wantMsg: "subset"},
		{name: "subset none match", specs: []cand{{}}, req: Request{SubsetPresent: true, Subset: []string{"1.1.1.1:1"}}, wantStatus: 503},
		{name: "subset partial", specs: []cand{{}, {}, {}}, req: Request{SubsetPresent: true, Subset: []string{"10.0.0.2:8000", "9.9.9.9:1"}}, wantKeys: []string{"10.0.0.2:8000"}},
		{name: "subset by IP when the port is not a pool port", specs: []cand{{}, {}, {}}, req: Request{SubsetPresent: true, Subset: []string{"10.0.0.3:9090"}}, wantKeys: []string{"10.0.0.3:8000"}},
		{name: "subset IP without port", specs: []cand{{}, {}, {}}, req: Request{SubsetPresent: true, Subset: []string{"10.0.0.1"}}, wantKeys: []string{"10.0.0.1:8000"}},
		{name: "busy is opt-in: full endpoints still routed", specs: []cand{decodeFull, decodeFull}, wantKeys: []string{"10.0.0.1:8000"}},
		{name: "all busy by decode", specs: []cand{decodeFull, decodeFull}, mut: decodeBusy, wantStatus: 503, wantType: apierr.TypeOverloaded, wantMsg: "all eligible endpoints are overloaded"},
		{name: "busy excluded", specs: []cand{decodeFull, {}}, mut: decodeBusy, wantKeys: []string{"10.0.0.2:8000"}},
		{name: "queued work holds no KV", specs: []cand{decodeQueued, {}}, mut: decodeBusy, wantKeys: []string{"10.0.0.1:8000"}},
		{name: "prefill frac", specs: []cand{{active: activework.Counts{PrefillTokens: 5000}}, {active: activework.Counts{PrefillTokens: 4000}}},
			mut: func(r *v1.Router) { f := 0.5; r.Busy.ActivePrefillTokensFrac = &f }, wantKeys: []string{"10.0.0.2:8000"}},
		{name: "prefill abs", specs: []cand{{active: activework.Counts{PrefillTokens: 101}}, {active: activework.Counts{PrefillTokens: 100}}},
			mut: func(r *v1.Router) { n := 100; r.Busy.ActivePrefillTokens = &n }, wantKeys: []string{"10.0.0.2:8000"}},
		{name: "unhealthy", specs: []cand{{load: endpoints.Load{Excluded: true, Reason: "parse: /metrics: bad"}}}, wantStatus: 503,
			wantMsg: "all 1 eligible endpoints excluded (failing metric scrapes): scrape 10.0.0.1:8000: parse: /metrics: bad"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := router(v1.ModeRoundRobin, func(r *v1.Router) { zero := 0; r.Fallbacks = &zero })
			if tc.mut != nil {
				tc.mut(&cfg)
			}
			var cands []Candidate
			if len(tc.specs) > 0 {
				cands = fleet(t, tc.specs...)
			}
			got, _, err := mustNew(t, cfg).Schedule(&tc.req, cands)
			if tc.wantStatus != 0 {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Status != tc.wantStatus || (tc.wantType != "" && e.Type != tc.wantType) ||
					!strings.Contains(e.Message, tc.wantMsg) {
					t.Fatalf("err = %v, want %d %s %q", err, tc.wantStatus, tc.wantType, tc.wantMsg)
				}
				return
			}
			if err != nil || strings.Join(keys(got), ",") != strings.Join(tc.wantKeys, ",") {
				t.Fatalf("got %v err %v, want %v", keys(got), err, tc.wantKeys)
			}
		})
	}
}

func TestModes(t *testing.T) {
	loaded := []cand{{active: activework.Counts{Requests: 5}}, {active: activework.Counts{Requests: 1}}, {active: activework.Counts{Requests: 3}}}
	t.Run("round-robin cycles", func(t *testing.T) {
		s := mustNew(t, router(v1.ModeRoundRobin))
		var seen []string
		for i := 0; i < 6; i++ {
			got, _, _ := s.Schedule(&Request{}, fleet(t, loaded...))
			seen = append(seen, got[0].Key()[7:8])
		}
		if strings.Join(seen, "") != "123123" {
			t.Fatalf("order %v", seen)
		}
	})
	t.Run("least-loaded", func(t *testing.T) {
		got, _, _ := mustNew(t, router(v1.ModeLeastLoaded)).Schedule(&Request{}, fleet(t, loaded...))
		if strings.Join(keys(got), ",") != "10.0.0.2:8000,10.0.0.3:8000,10.0.0.1:8000" {
			t.Fatalf("got %v", keys(got))
		}
	})
	t.Run("power-of-two never picks the most loaded of three", func(t *testing.T) {
		s := mustNew(t, router(v1.ModePowerOfTwo))
		for i := 0; i < 50; i++ {
			got, _, _ := s.Schedule(&Request{}, fleet(t, loaded...))
			if got[0].Key() == "10.0.0.1:8000" {
				t.Fatal("picked the most loaded endpoint")
			}
		}
	})
	t.Run("random covers all", func(t *testing.T) {
		s := mustNew(t, router(v1.ModeRandom))
		seen := map[string]bool{}
		for i := 0; i < 100; i++ {
			got, _, _ := s.Schedule(&Request{}, fleet(t, loaded...))
			seen[got[0].Key()] = true
		}
		if len(seen) != 3 {
			t.Fatalf("random saw %v", seen)
		}
	})
	t.Run("fallbacks length", func(t *testing.T) {
		one := 1
		got, _, _ := mustNew(t, router(v1.ModeKV, func(r *v1.Router) { r.Fallbacks = &one })).Schedule(&Request{}, fleet(t, loaded...))
		if len(got) != 2 {
			t.Fatalf("got %d endpoints, want primary + 1 fallback", len(got))
		}
	})
}

func TestDeviceAware(t *testing.T) {
	gpu, cpu := map[string]string{"kvpick.io/device": "gpu"}, map[string]string{"kvpick.io/device": "cpu"}
	s := mustNew(t, router(v1.ModeDeviceAware))
	// GPU group: 2 endpoints with 8 and 4 in flight: 12/(2*8) = 0.75. CPU: 1 idle endpoint: 0/1 = 0 -> CPU.
	got, _, _ := s.Schedule(&Request{}, fleet(t,
		cand{labels: gpu, active: activework.Counts{Requests: 8}}, cand{labels: gpu, active: activework.Counts{Requests: 4}}, cand{labels: cpu}))
	if got[0].Key() != "10.0.0.3:8000" {
		t.Fatalf("want the idle CPU endpoint, got %v", keys(got))
	}
	// CPU has 1 in flight: 1/1 = 1 > 0.75 -> GPU group, its least loaded member.
	got, _, _ = s.Schedule(&Request{}, fleet(t,
		cand{labels: gpu, active: activework.Counts{Requests: 8}}, cand{labels: gpu, active: activework.Counts{Requests: 4}}, cand{labels: cpu, active: activework.Counts{Requests: 1}}))
	if got[0].Key() != "10.0.0.2:8000" {
		t.Fatalf("want the less loaded GPU endpoint, got %v", keys(got))
	}
}

func TestDirect(t *testing.T) {
	s := mustNew(t, router(v1.ModeDirect))
	cases := []struct {
		req  Request
		want string
		code int
	}{
		{Request{Override: "10.0.0.2:8000"}, "10.0.0.2:8000", 0},
		{Request{Override: "10.9.9.9:8000"}, "", 400},
		{Request{}, "", 400},
		{Request{Override: "10.0.0.2:8000", SubsetPresent: true, Subset: []string{"10.0.0.1:8000"}}, "", 503},
	}
	for _, tc := range cases {
		got, _, err := s.Schedule(&tc.req, fleet(t, cand{}, cand{}))
		if tc.code != 0 {
			if apierr.As(err).Status != tc.code {
				t.Errorf("%+v: err %v, want %d", tc.req, err, tc.code)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0].Key() != tc.want {
			t.Errorf("%+v: got %v err %v", tc.req, keys(got), err)
		}
	}
}

func TestSessionPinAndSoftmax(t *testing.T) {
	s := mustNew(t, router(v1.ModeKV, decodeBusy))
	got, res, _ := s.Schedule(&Request{Pinned: "10.0.0.2:8000", PromptTokens: 160, Blocks: 10, BlockSize: 16},
		fleet(t, cand{cached: 10}, cand{}))
	if got[0].Key() != "10.0.0.2:8000" || !res.Pinned {
		t.Fatalf("pin not honoured: %v", keys(got))
	}
	// Pinned endpoint that is busy is not used.
	got, res, _ = s.Schedule(&Request{Pinned: "10.0.0.2:8000"}, fleet(t, cand{}, cand{total: 10, active: activework.Counts{DecodeBlocks: 11}}))
	if got[0].Key() != "10.0.0.1:8000" || res.Pinned {
		t.Fatalf("busy pin used: %v", keys(got))
	}
	// Temperature spreads choices but still prefers the cheaper endpoint.
	temp := 0.5
	soft := mustNew(t, router(v1.ModeKV, func(r *v1.Router) { r.KVCost.Temperature = &temp }))
	count := map[string]int{}
	for i := 0; i < 400; i++ {
		got, _, _ := soft.Schedule(&Request{PromptTokens: 1600, Blocks: 100, BlockSize: 16}, fleet(t, cand{cached: 100}, cand{}))
		count[got[0].Key()]++
	}
	if count["10.0.0.1:8000"] <= count["10.0.0.2:8000"] || count["10.0.0.2:8000"] == 0 {
		t.Fatalf("softmax counts %v", count)
	}
}

func TestCustomProfile(t *testing.T) {
	cfg := router(v1.ModeCustom, func(r *v1.Router) {
		r.Profile = &v1.Profile{Scorers: []v1.WeightedName{{Name: v1.ScorerKVOverlap, Weight: 3}, {Name: v1.ScorerQueueDepth, Weight: 2}}, Picker: v1.PickerMaxScore}
	})
	s := mustNew(t, cfg)
	fresh := func(w int) endpoints.Load { return endpoints.Load{Fresh: true, Waiting: w} }
	// A: full cache hit (3) but the longest queue (0) = 3; B: no hit, short queue (2) = 2.
	got, _, _ := s.Schedule(&Request{Blocks: 10}, fleet(t, cand{cached: 10, load: fresh(10)}, cand{load: fresh(0)}))
	if got[0].Key() != "10.0.0.1:8000" {
		t.Fatalf("got %v", keys(got))
	}
	cfg.Profile.Scorers[1].Weight = 4 // now the queue dominates: A 3, B 4
	got, _, _ = mustNew(t, cfg).Schedule(&Request{Blocks: 10}, fleet(t, cand{cached: 10, load: fresh(10)}, cand{load: fresh(0)}))
	if got[0].Key() != "10.0.0.2:8000" {
		t.Fatalf("got %v", keys(got))
	}
}

func keys(cs []Candidate) []string {
	var out []string
	for i := range cs {
		out = append(out, cs[i].Key())
	}
	return out
}

func TestKVUtilizationIsAbsolute(t *testing.T) {
	cands := fleet(t, cand{load: endpoints.Load{Fresh: true, KVUsage: 0.9}}, cand{load: endpoints.Load{Fresh: true, KVUsage: 0.95}}, cand{})
	out := make([]float64, 3)
	kvUtilizationScorer{}.Score(&Request{}, cands, out)
	want := []float64{0.1, 0.05, 1}
	for i := range want {
		if d := out[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("scores %v, want %v", out, want)
		}
	}
}

// decodeBusy turns on the decode busy threshold at 1.0 (off by default).
func decodeBusy(r *v1.Router) { f := 1.0; r.Busy.ActiveDecodeBlocks = &f }
