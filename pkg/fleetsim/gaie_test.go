package fleetsim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/endpoints"
)

// gaieFixture is two endpoints a and b with the given scraped loads.
func gaieFixture(t *testing.T, waiting [2]int, usage [2]float64) *gaie {
	t.Helper()
	set := endpoints.NewSet()
	eps := []endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000}, {Address: "10.0.0.2", Port: 8000}}
	if err := set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	for i, e := range eps {
		set.UpdateLoad(e.Key(), endpoints.Load{Waiting: waiting[i], KVUsage: usage[i], Fresh: true, At: time.Now()})
	}
	pol, err := GAIEDefault("g", GAIEOptions{}).Build(Env{Set: set, Now: time.Now, Seed: 1, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return pol.(*gaie)
}

// TestGAIEScores pins the default profile's sum on hand-checked numbers:
// a has no queue and KV 50 % used; b has 4 waiting, KV 10 % used.
//
//	a: 2x1 + 2x0.5 + 3x0       = 3.00
//	b: 2x0 + 2x0.9 + 3x(3/4)   = 4.05  (b holds 3 of 4 blocks: b wins)
//	b: 2x0 + 2x0.9 + 3x(1/4)   = 2.55  (b holds 1 of 4: a wins)
func TestGAIEScores(t *testing.T) {
	chain := []uint64{1, 2, 3, 4}
	for _, c := range []struct {
		held []uint64
		want int
	}{{[]uint64{1, 2, 3}, 1}, {[]uint64{1}, 0}} {
		g := gaieFixture(t, [2]int{0, 4}, [2]float64{0.5, 0.1})
		for _, h := range c.held {
			g.eps[1].lru.add(h)
		}
		if got := g.choose(chain); got != c.want {
			t.Errorf("b holds %v: chose %d, want %d", c.held, got, c.want)
		}
	}
}

// TestGAIEHashesOnly256Blocks: prompts equal in their first 256 x 64 bytes
// hash alike however they continue; shorter differences do not.
func TestGAIEHashesOnly256Blocks(t *testing.T) {
	g := gaieFixture(t, [2]int{}, [2]float64{})
	chain := func(text string) []uint64 {
		a := &Arrival{text: new([]byte), rendered: true}
		*a.text = []byte(text)
		p, err := g.Prepare(a)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*gaiePending).chain
	}
	head := strings.Repeat("x", 256*64)
	a, b := chain(head+"tail one"), chain(head+strings.Repeat("y", 5000))
	if len(a) != 256 || len(b) != 256 || a[255] != b[255] {
		t.Fatalf("chains of %d and %d blocks, last equal %v: want 256 equal", len(a), len(b), a[255] == b[255])
	}
	if c := chain(strings.Repeat("x", 100*64) + strings.Repeat("z", 64)); len(c) != 101 || c[100] == a[100] {
		t.Fatal("a difference inside the first 256 blocks was not seen")
	}
}

// TestGAIELRUWithoutTTL: capacity bounds the index, least recently added
// first out; nothing expires by age.
func TestGAIELRUWithoutTTL(t *testing.T) {
	l := newLRU(2)
	l.add(1)
	l.add(2)
	l.add(1) // 1 is now the most recent
	l.add(3)
	if !l.has(1) || l.has(2) || !l.has(3) {
		t.Fatalf("after 1,2,1,3 at capacity 2: has1 %v has2 %v has3 %v", l.has(1), l.has(2), l.has(3))
	}
	g := gaieFixture(t, [2]int{}, [2]float64{})
	g.Tick(time.Now().Add(24 * time.Hour))
	g.eps[0].lru.add(7)
	g.Tick(time.Now().Add(48 * time.Hour))
	if !g.eps[0].lru.has(7) {
		t.Fatal("a block expired by age")
	}
}

// TestGAIETiesAtRandomNeverRefuses: equal endpoints both get chosen, and a
// dispatch never errors whatever the load.
func TestGAIETiesAtRandomNeverRefuses(t *testing.T) {
	g := gaieFixture(t, [2]int{500, 500}, [2]float64{1, 1})
	g.rnd = rand.New(rand.NewPCG(3, 4))
	seen := map[string]int{}
	for range 64 {
		tk, err := g.Dispatch(&gaiePending{})
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		seen[tk.Endpoint()]++
	}
	if len(seen) != 2 {
		t.Fatalf("ties not broken at random: %v", seen)
	}
}
