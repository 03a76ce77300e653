package fleetsim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSGLangChoose pins the cache-aware policy on hand-checked cases: a
// 4-block prompt (256 characters) and two endpoints, with the current
// defaults (threshold 0.3, balance 64 / 1.5, least loaded on a miss) and the
// older ones (0.5, 32 / 1.1, smallest tree on a miss).
func TestSGLangChoose(t *testing.T) {
	chain := []uint64{1, 2, 3, 4}
	tree := func(hs ...uint64) map[uint64]int64 {
		m := map[uint64]int64{}
		for _, h := range hs {
			m[h] = 1
		}
		return m
	}
	type trees = []map[uint64]int64
	cur, old := SGLangOptions{}, SGLangV04Options()
	cases := []struct {
		name  string
		o     SGLangOptions
		loads []int
		trees trees
		want  int
	}{
		{"balanced: match 3/4 > 0.3 goes to the match", cur, []int{0, 5}, trees{tree(9), tree(1, 2, 3)}, 1},
		{"match 1/4 <= 0.3: least loaded, not the match", cur, []int{3, 1}, trees{tree(1), tree()}, 1},
		{"imbalanced (70 > 64, 100 > 1.5x30): least loaded", cur, []int{100, 30}, trees{tree(1, 2, 3, 4), tree()}, 1},
		{"65 apart but 200 < 1.5x135: cache wins", cur, []int{200, 135}, trees{tree(1, 2, 3, 4), tree()}, 0},
		{"60x apart but only 59 more: cache wins", cur, []int{60, 1}, trees{tree(1, 2, 3, 4), tree()}, 0},
		{"old: match 2/4 not > 0.5: smallest tree", old, []int{0, 9}, trees{tree(1, 2, 7), tree(8, 9)}, 1},
		{"old: imbalanced (35 > 32, 40 > 1.1x5): least loaded", old, []int{40, 5}, trees{tree(1, 2, 3, 4), tree()}, 1},
		{"old: match 3/4 > 0.5 goes to the match", old, []int{9, 0}, trees{tree(1, 2, 3), tree()}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.setDefaults()
			p := &sglang{o: o, now: time.Now, rnd: rand.New(rand.NewPCG(1, 2))}
			for i := range c.loads {
				p.eps = append(p.eps, &sgEndpoint{key: string(rune('a' + i)), tree: c.trees[i], load: c.loads[i]})
			}
			if got := p.choose(&sgPending{chain: chain, chars: 4 * o.BlockBytes}); got != p.eps[c.want] {
				t.Errorf("chose %s, want %s", got.key, p.eps[c.want].key)
			}
		})
	}
}

// TestSGLangTiesAtRandom: two equal endpoints both get chosen.
func TestSGLangTiesAtRandom(t *testing.T) {
	o := SGLangOptions{}
	o.setDefaults()
	p := &sglang{o: o, now: time.Now, rnd: rand.New(rand.NewPCG(1, 2))}
	p.eps = []*sgEndpoint{{key: "a", tree: map[uint64]int64{}}, {key: "b", tree: map[uint64]int64{}}}
	seen := map[string]int{}
	for range 64 {
		seen[p.choose(&sgPending{chain: []uint64{1}, chars: 64}).key]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Fatalf("ties not broken at random: %v", seen)
	}
}

func TestSGLangEvictsOldestFirst(t *testing.T) {
	tree := map[uint64]int64{1: 10, 2: 30, 3: 20, 4: 40}
	evictOldest(tree, 2)
	if _, ok := tree[1]; ok || len(tree) != 2 || tree[2] != 30 || tree[4] != 40 {
		t.Errorf("after evicting 2: %v", tree)
	}
}
