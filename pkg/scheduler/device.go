package scheduler

import "sort"

// deviceAwarePicker groups candidates by a label (e.g. cpu/gpu), weights each
// group by capacity, sends to the group with the lowest in-flight per weighted
// member, and to its least-loaded member; fallbacks continue by group.
type deviceAwarePicker struct {
	label   string
	weights map[string]float64
}

func (deviceAwarePicker) Name() string { return "device-aware-weighted" }

func (p deviceAwarePicker) weight(group string) float64 {
	if w, ok := p.weights[group]; ok && w > 0 {
		return w
	}
	return 1
}

func (p deviceAwarePicker) Order(_ *Request, cands []Candidate, _ []float64, rnd Rand, n int) []int {
	type group struct {
		name    string
		members []int
		load    float64
	}
	groups := map[string]*group{}
	var names []string
	for _, i := range permutation(len(cands), rnd) {
		name := cands[i].Entry.Labels[p.label]
		g := groups[name]
		if g == nil {
			g = &group{name: name}
			groups[name] = g
			names = append(names, name)
		}
		g.members = append(g.members, i)
		g.load += float64(cands[i].loadSignal())
	}
	for _, g := range groups {
		g.load /= float64(len(g.members)) * p.weight(g.name)
		sort.SliceStable(g.members, func(a, b int) bool {
			return cands[g.members[a]].loadSignal() < cands[g.members[b]].loadSignal()
		})
	}
	sort.SliceStable(names, func(a, b int) bool { return groups[names[a]].load < groups[names[b]].load })
	var order []int
	for _, name := range names {
		order = append(order, groups[name].members...)
	}
	return firstN(order, n)
}
