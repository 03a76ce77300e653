package scheduler

import (
	"slices"
	"strings"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// TestUnknownPluginNames: a name the scheduler does not know is an error
// naming it, never a silent default.
func TestUnknownPluginNames(t *testing.T) {
	scorers := []v1.WeightedName{{Name: v1.ScorerKVOverlap, Weight: 1}}
	cases := []struct {
		name    string
		profile v1.Profile
		want    string
	}{
		{"filter", v1.Profile{Filters: []string{v1.FilterModel, "bussy"}, Scorers: scorers, Picker: v1.PickerMaxScore}, `unknown filter "bussy"`},
		{"scorer", v1.Profile{Scorers: []v1.WeightedName{{Name: "kv-overlapp", Weight: 1}}, Picker: v1.PickerMaxScore}, `unknown scorer "kv-overlapp"`},
		{"picker", v1.Profile{Scorers: scorers, Picker: "max-scores"}, `unknown picker "max-scores"`},
	}
	for _, tc := range cases {
		p := tc.profile
		_, err := New(router(v1.ModeCustom, func(r *v1.Router) { r.Profile = &p }))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	// Every documented name builds.
	for _, f := range v1.FilterNames {
		if _, err := filterFor(f, Busy{}); err != nil {
			t.Errorf("filter %q: %v", f, err)
		}
	}
	for _, p := range v1.PickerNames {
		if _, err := pickerFor(p, 0, roundRobinPicker{}); err != nil {
			t.Errorf("picker %q: %v", p, err)
		}
	}
}

func TestPluginsNamesTheProfile(t *testing.T) {
	s := mustNew(t, router(v1.ModeCustom, func(r *v1.Router) {
		r.Profile = &v1.Profile{Filters: []string{v1.FilterModel, v1.FilterBusy},
			Scorers: []v1.WeightedName{{Name: v1.ScorerLoRAAffinity, Weight: 2}}, Picker: v1.PickerMaxScore}
	}))
	f, sc, p := s.Plugins()
	if !slices.Equal(f, []string{"model", "busy"}) || !slices.Equal(sc, []string{"lora-affinity*2"}) || p != "max-score" {
		t.Fatalf("Plugins = %v %v %q", f, sc, p)
	}
}

func TestLoRAAffinityScorer(t *testing.T) {
	running := func(a ...string) endpoints.Load { return endpoints.Load{Fresh: true, RunningLoRA: a} }
	cases := []struct {
		name string
		lora string
		want []float64
	}{
		{"adapter running on the second", "sql", []float64{0, 1, 0}},
		{"adapter running nowhere", "chat", []float64{0, 0, 0}},
		{"base model request", "", []float64{0, 0, 0}},
	}
	for _, tc := range cases {
		cands := fleet(t, cand{load: running("code")}, cand{load: running("code", "sql")}, cand{})
		out := []float64{9, 9, 9}
		loraAffinityScorer{}.Score(&Request{LoRA: tc.lora}, cands, out)
		if !slices.Equal(out, tc.want) {
			t.Errorf("%s: scores %v, want %v", tc.name, out, tc.want)
		}
	}
}

func TestSessionScorer(t *testing.T) {
	cases := []struct {
		name   string
		pinned string
		want   []float64
	}{
		{"pinned to the second", "10.0.0.2:8000", []float64{0, 1}},
		{"pinned elsewhere", "10.0.0.9:8000", []float64{0, 0}},
		{"no session", "", []float64{0, 0}},
	}
	for _, tc := range cases {
		out := []float64{9, 9}
		sessionScorer{}.Score(&Request{Pinned: tc.pinned}, fleet(t, cand{}, cand{}), out)
		if !slices.Equal(out, tc.want) {
			t.Errorf("%s: scores %v, want %v", tc.name, out, tc.want)
		}
	}
}
