package admission

import "testing"

func TestGate(t *testing.T) {
	free := Load{Endpoint: "a", PrefillTokens: 100, MaxBatched: 1000}
	cases := []struct {
		name  string
		loads []Load
		want  bool
		on    string
	}{
		{"none eligible", nil, false, ""},
		{"under threshold", []Load{free}, true, "a"},
		{"at threshold passes", []Load{{Endpoint: "a", PrefillTokens: 500, MaxBatched: 1000}}, true, "a"},
		{"over threshold", []Load{{Endpoint: "a", PrefillTokens: 501, MaxBatched: 1000}}, false, ""},
		{"busy counts as full", []Load{{Endpoint: "a", MaxBatched: 1000, Busy: true}}, false, ""},
		{"least loaded wins", []Load{free, {Endpoint: "b", PrefillTokens: 10, MaxBatched: 1000}}, true, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGate[int](0.5)
			if got := g.Admit(1, 40, tc.loads); got != tc.want {
				t.Fatalf("Admit = %v, want %v", got, tc.want)
			}
			if tc.on != "" && g.Reserved(tc.on) != 40 {
				t.Fatalf("reserved on %s = %d, want 40", tc.on, g.Reserved(tc.on))
			}
			g.Release(1)
			g.Release(1) // a second release is ignored
			for _, l := range tc.loads {
				if n := g.Reserved(l.Endpoint); n != 0 {
					t.Fatalf("after release %s holds %d", l.Endpoint, n)
				}
			}
		})
	}
}

// TestGateReservationsAccumulate: reserved tokens count as load, so two
// requests do not pass on the same free capacity.
func TestGateReservationsAccumulate(t *testing.T) {
	g := NewGate[string](1)
	loads := []Load{{Endpoint: "a", PrefillTokens: 0, MaxBatched: 100}}
	if !g.Admit("r1", 101, loads) {
		t.Fatal("first request refused on an idle endpoint")
	}
	if g.Admit("r2", 1, loads) {
		t.Fatal("second request passed on capacity the first reserved")
	}
	g.Release("r1")
	if !g.Admit("r2", 1, loads) {
		t.Fatal("capacity not freed by Release")
	}
}

// TestGateAdmitTo: a request whose endpoint is already picked passes only on
// that endpoint's room, at the threshold it is given, reservations counted.
func TestGateAdmitTo(t *testing.T) {
	cases := []struct {
		name      string
		load      Load
		threshold float64
		reserved  int // held on the endpoint by another request first
		want      bool
	}{
		{"under", Load{Endpoint: "a", PrefillTokens: 900, MaxBatched: 1000}, 1, 0, true},
		{"at", Load{Endpoint: "a", PrefillTokens: 1000, MaxBatched: 1000}, 1, 0, true},
		{"over", Load{Endpoint: "a", PrefillTokens: 1001, MaxBatched: 1000}, 1, 0, false},
		{"own threshold, not the gate's", Load{Endpoint: "a", PrefillTokens: 400, MaxBatched: 1000}, 0.3, 0, false},
		{"reservations count", Load{Endpoint: "a", PrefillTokens: 500, MaxBatched: 1000}, 1, 600, false},
		{"busy", Load{Endpoint: "a", MaxBatched: 1000, Busy: true}, 1, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGate[int](0.5)
			if tc.reserved > 0 && !g.AdmitTo(0, tc.reserved, Load{Endpoint: "a", MaxBatched: 1000}, 1) {
				t.Fatal("setup reservation refused")
			}
			if got := g.AdmitTo(1, 40, tc.load, tc.threshold); got != tc.want {
				t.Fatalf("AdmitTo = %v, want %v", got, tc.want)
			}
			want := tc.reserved
			if tc.want {
				want += 40
			}
			if got := g.Reserved("a"); got != want {
				t.Fatalf("reserved %d, want %d", got, want)
			}
			g.Release(1)
			if got := g.Reserved("a"); got != tc.reserved {
				t.Fatalf("after release %d, want %d", got, tc.reserved)
			}
		})
	}
}
