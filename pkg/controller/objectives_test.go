package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestObjectivePriority(t *testing.T) {
	obj := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := objectiveObject()
		u.SetName(name)
		u.Object["spec"] = spec
		return u
	}
	ref := func(name, group string) map[string]any {
		m := map[string]any{"name": name}
		if group != "" {
			m["group"] = group
		}
		return m
	}
	cases := []struct {
		name string
		u    *unstructured.Unstructured
		prio int
		ok   bool
	}{
		{"priority", obj("chat", map[string]any{"priority": int64(5), "poolRef": ref("pool", "")}), 5, true},
		{"negative", obj("batch", map[string]any{"priority": int64(-2), "poolRef": ref("pool", PoolGroup)}), -2, true},
		{"unset is 0", obj("x", map[string]any{"poolRef": ref("pool", "")}), 0, true},
		{"other pool", obj("x", map[string]any{"priority": int64(5), "poolRef": ref("other", "")}), 0, false},
		{"other group", obj("x", map[string]any{"priority": int64(5), "poolRef": ref("pool", "example.com")}), 0, false},
		{"priority not a number", obj("x", map[string]any{"priority": "high", "poolRef": ref("pool", "")}), 0, false},
	}
	for _, c := range cases {
		name, prio, ok := objectivePriority(c.u, "pool")
		if ok != c.ok || prio != c.prio || (ok && name != c.u.GetName()) {
			t.Errorf("%s: got %q %d %v, want %d %v", c.name, name, prio, ok, c.prio, c.ok)
		}
	}
}
