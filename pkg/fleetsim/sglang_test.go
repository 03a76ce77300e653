package fleetsim

import (
	"testing"
	"time"
)

func TestSGLangChoose(t *testing.T) {
	chain := []uint64{1, 2, 3, 4}
	tree := func(hs ...uint64) map[uint64]int64 {
		m := map[uint64]int64{}
		for _, h := range hs {
			m[h] = 1
		}
		return m
	}
	cases := []struct {
		name  string
		loads []int
		trees []map[uint64]int64
		want  int
	}{
		{"balanced: best match over the threshold", []int{0, 5}, []map[uint64]int64{tree(9), tree(1, 2, 3)}, 1},
		{"balanced: match under the threshold goes to the smallest tree", []int{0, 0}, []map[uint64]int64{tree(1, 2, 7), tree(9, 8)}, 1},
		{"imbalanced past both thresholds: least loaded", []int{40, 5}, []map[uint64]int64{tree(1, 2, 3, 4), tree()}, 1},
		{"absolute gap but not relative: cache wins", []int{340, 320}, []map[uint64]int64{tree(1, 2, 3, 4), tree()}, 0},
		{"relative gap but not absolute: cache wins", []int{30, 1}, []map[uint64]int64{tree(1, 2, 3, 4), tree()}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := SGLangOptions{BlockSize: 1}
			o.setDefaults()
			p := &sglang{o: o, now: time.Now}
			for i := range c.loads {
				p.eps = append(p.eps, &sgEndpoint{key: string(rune('a' + i)), tree: c.trees[i], load: c.loads[i]})
			}
			if got := p.choose(&sgPending{chain: chain, tokens: 4}); got != p.eps[c.want] {
				t.Errorf("chose %s, want %s", got.key, p.eps[c.want].key)
			}
		})
	}
}

func TestSGLangEvictsOldestFirst(t *testing.T) {
	tree := map[uint64]int64{1: 10, 2: 30, 3: 20, 4: 40}
	evictOldest(tree, 2)
	if _, ok := tree[1]; ok || len(tree) != 2 || tree[2] != 30 || tree[4] != 40 {
		t.Errorf("after evicting 2: %v", tree)
	}
}
