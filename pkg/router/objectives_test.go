package router

import (
	"sync"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

func TestSetObjectivesReplacesPriorities(t *testing.T) {
	f := newFixture(t, 1, func(c *v1.Config) { c.Objectives = map[string]int{"batch": -1, "chat": 5} })
	hdr := func(n string) map[string]string { return map[string]string{"x-gateway-inference-objective": n} }
	steps := []struct {
		set  map[string]int // nil: keep the config's
		want map[string]int
	}{
		{nil, map[string]int{"batch": -1, "chat": 5, "other": 0, "": 0}},
		{map[string]int{"chat": 9, "other": 2}, map[string]int{"batch": 0, "chat": 9, "other": 2}},
		{map[string]int{}, map[string]int{"chat": 0}},
	}
	for i, s := range steps {
		if s.set != nil {
			f.r.SetObjectives(s.set)
		}
		for name, want := range s.want {
			if got := f.r.priority(hdr(name)); got != want {
				t.Errorf("step %d: priority(%q) = %d, want %d", i, name, got, want)
			}
		}
	}
}

func TestSetObjectivesCopiesAndIsRaceFree(t *testing.T) {
	f := newFixture(t, 1, nil)
	m := map[string]int{"a": 1}
	f.r.SetObjectives(m)
	m["a"] = 7 // the caller's map is not the router's
	if got := f.r.priority(map[string]string{"x-gateway-inference-objective": "a"}); got != 1 {
		t.Fatalf("priority after caller mutation = %d, want 1", got)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			f.r.SetObjectives(map[string]int{"a": i})
		}
	}()
	go func() {
		defer wg.Done()
		for range 1000 {
			_ = f.r.priority(map[string]string{"x-gateway-inference-objective": "a"})
		}
	}()
	wg.Wait()
}
