package workload

import "github.com/kvpick/kvpick/internal/mix"

// Vocab bounds generated token ids (a Llama-sized vocabulary).
const Vocab = 32000

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 { return mix.Splitmix64(x) }

// SegmentID names the n-th segment of a namespace (one per generator role),
// so independent generators never share segments by accident.
func SegmentID(namespace, n uint64) uint64 {
	return mix64(namespace*0x9e3779b97f4a7c15 + mix64(n+1))
}

// Token is token number i of segment id.
func Token(id uint64, i int) uint32 {
	return uint32(mix64(id^mix64(uint64(i)+0x51ed27)) % Vocab)
}

// Expander turns segments into tokens, caching each segment's expansion so
// a segment shared by many prompts is generated once. The cache is bounded:
// past MaxCached tokens it starts over. Not safe for concurrent use.
type Expander struct {
	// MaxCached bounds the cached tokens (default 32M, 128 MiB: the Mooncake
	// trace expands to ~22M distinct tokens).
	MaxCached int
	cache     map[uint64][]uint32
	cached    int
}

// NewExpander returns an Expander with the default bound.
func NewExpander() *Expander { return &Expander{MaxCached: 32 << 20} }

// Append appends r's prompt tokens to dst.
func (x *Expander) Append(dst []uint32, r *Request) []uint32 {
	for _, s := range r.Segments {
		base := x.segment(s)
		if s.Variant == 0 {
			dst = append(dst, base...)
			continue
		}
		for _, t := range base {
			dst = append(dst, variantToken(t, s.Variant))
		}
	}
	return dst
}

// variantToken shifts t by a variant-specific offset within the vocabulary
// (a bijection, so distinct tokens stay distinct).
func variantToken(t, variant uint32) uint32 {
	return (t + variant*7919) % Vocab
}

// Tokens returns r's prompt tokens in a new slice.
func (x *Expander) Tokens(r *Request) []uint32 {
	return x.Append(make([]uint32, 0, r.InputLen()), r)
}

func (x *Expander) segment(s Segment) []uint32 {
	if x.cache == nil {
		x.cache = map[uint64][]uint32{}
	}
	if t, ok := x.cache[s.ID]; ok && len(t) >= s.Len {
		return t[:s.Len]
	}
	t := make([]uint32, s.Len)
	for i := range t {
		t[i] = Token(s.ID, i)
	}
	if x.cached+s.Len > x.MaxCached {
		clear(x.cache)
		x.cached = 0
	}
	x.cached += s.Len - len(x.cache[s.ID])
	x.cache[s.ID] = t
	return t
}
