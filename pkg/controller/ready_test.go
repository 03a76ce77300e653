package controller

import "testing"

func TestReadiness(t *testing.T) {
	type step struct {
		endpoints, leader *bool
		want              bool
	}
	yes, no := true, false
	cases := []struct {
		name       string
		needLeader bool
		steps      []step
	}{
		{"no election: endpoints decide", false, []step{
			{nil, nil, false}, {&yes, nil, true}, {&no, nil, false}}},
		{"election: endpoints and lease", true, []step{
			{&yes, nil, false}, {nil, &yes, true}, {&no, nil, false}, {&yes, nil, true}, {nil, &no, false}}},
	}
	for _, c := range cases {
		var got bool
		r := NewReadiness(func(b bool) { got = b }, c.needLeader)
		for i, s := range c.steps {
			if s.endpoints != nil {
				r.SetEndpoints(*s.endpoints)
			}
			if s.leader != nil {
				r.SetLeader(*s.leader)
			}
			if got != s.want {
				t.Errorf("%s step %d: ready %v, want %v", c.name, i, got, s.want)
			}
		}
	}
}
