package kvindex

import "time"

// TierWeights credits a block held only on a slower tier as a fraction of a
// GPU hit (it must be copied back before use). Zero weights ignore the tier.
type TierWeights struct {
	Host, Disk float64
}

// MatchCredited is Match with slower tiers credited: for each endpoint, its
// GPU prefix counts fully, the blocks its host-tier prefix adds beyond that at
// w.Host, and those its disk (or external) prefix adds beyond both at w.Disk,
// rounded down. While no endpoint holds off-GPU blocks it costs what Match
// does.
func (ix *Index) MatchCredited(chain []uint64, now time.Time, w TierWeights, dst []Overlap) []Overlap {
	start := len(dst)
	dst = ix.Match(chain, now, dst)
	if !ix.tiered.Load() || (w.Host <= 0 && w.Disk <= 0) || len(chain) == 0 {
		return dst
	}
	best := map[string]float64{}
	for _, o := range dst[start:] {
		best[o.Endpoint] = float64(o.Blocks)
	}
	reach := map[string]int{}
	for k, v := range best {
		reach[k] = int(v)
	}
	buf := make([]uint64, 0, len(chain))
	for _, tw := range []struct {
		tiers  []Tier
		weight float64
	}{{[]Tier{TierHost}, w.Host}, {[]Tier{TierDisk, TierExternal}, w.Disk}} {
		if tw.weight <= 0 {
			continue
		}
		for _, t := range tw.tiers {
			for _, o := range ix.Match(TierChain(buf[:0], chain, t), now, nil) {
				credit(best, reach, o, tw.weight)
			}
		}
	}
	dst = dst[:start]
	for ep, b := range best {
		if n := int(b); n > 0 {
			dst = append(dst, Overlap{Endpoint: ep, Blocks: n})
		}
	}
	return dst
}

// credit adds weight for the blocks o reaches beyond what faster tiers reached.
func credit(best map[string]float64, reach map[string]int, o Overlap, weight float64) {
	if extra := o.Blocks - reach[o.Endpoint]; extra > 0 {
		best[o.Endpoint] += weight * float64(extra)
		reach[o.Endpoint] = o.Blocks
	}
}

// MayMatch reports whether MatchCredited(chain, now, w) could name any
// endpoint, at any now: whether anyone holds chain[0] on the GPU or on a
// tier w credits. False is exact (a match starts at the first block); true
// means MatchCredited must be asked (a predicted claim may be past its TTL,
// a credit may round down to nothing). It costs one lookup per tier, where
// Match reads a whole first window: a long queue of cold requests asks this
// of every request on every release pass.
func (ix *Index) MayMatch(chain []uint64, w TierWeights) bool {
	if len(chain) == 0 {
		return false
	}
	if ix.s.has(chain[0]) {
		return true
	}
	if !ix.tiered.Load() {
		return false
	}
	var hb [1]uint64
	for _, tw := range []struct {
		t      Tier
		weight float64
	}{{TierHost, w.Host}, {TierDisk, w.Disk}, {TierExternal, w.Disk}} {
		if tw.weight > 0 && ix.s.has(TierChain(hb[:0], chain[:1], tw.t)[0]) {
			return true
		}
	}
	return false
}
