package router

import "maps"

// SetObjectives replaces the InferenceObjective priorities (name → priority;
// unknown names get 0). The map is copied and swapped in whole, so a request
// reads one consistent snapshot while the Kubernetes controller updates it.
// Safe for concurrent use.
func (r *Router) SetObjectives(m map[string]int) {
	c := maps.Clone(m)
	if c == nil {
		c = map[string]int{}
	}
	r.objectives.Store(&c)
}
