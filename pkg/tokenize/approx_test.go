package tokenize

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// pieces renders the split the reference Approx makes, for readable
// expectations; TestApproxSplit checks Approx's ids against the same split.
func pieces(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		j, _ := refNext(text, i)
		out = append(out, text[i:j])
		i = j
	}
	return out
}

// idsOf returns the ids of the given pieces, each at most 8 bytes.
func idsOf(pieces []string) []uint32 {
	var ids []uint32
	for _, p := range pieces {
		var packed uint64
		for k := len(p) - 1; k >= 0; k-- {
			packed = packed<<8 | uint64(p[k])
		}
		ids = append(ids, pieceID(packed, len(p)))
	}
	return ids
}

func TestApproxSplit(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"hello world", []string{"hell", "o", " worl", "d"}},
		{"the cat", []string{"the", " cat"}},
		{"  two", []string{" ", " two"}},
		{"a\n\nb", []string{"a", "\n\n", "b"}},
		{"end.\n", []string{"end", ".", "\n"}},
		{"x...!!", []string{"x", "...!", "!"}},
		{"         y", []string{"        ", " y"}},
		{"trailing ", []string{"trai", "ling", " "}},
		{"héllo", []string{"h\xc3\xa9l", "lo"}},
		{"a_b1", []string{"a_b1"}},
		{"\t x", []string{"\t", " x"}},
	}
	for _, tc := range tests {
		got := pieces(tc.text)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("pieces(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if got, want := Approx(nil, tc.text), idsOf(tc.want); !slices.Equal(got, want) {
			t.Errorf("Approx(%q) = %v, want %v", tc.text, got, want)
		}
		if n := CountApprox(tc.text); n != len(tc.want) {
			t.Errorf("CountApprox(%q) = %d, want %d", tc.text, n, len(tc.want))
		}
	}
}

func TestApproxDeterministicAndInRange(t *testing.T) {
	text := sampleText(10_000)
	a, b := Approx(nil, text), Approx(nil, text)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("lengths %d, %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("token %d differs: %d vs %d", i, a[i], b[i])
		}
		if a[i] >= VocabSize {
			t.Fatalf("token %d = %d out of range", i, a[i])
		}
	}
}

func TestApproxDistinguishesPieces(t *testing.T) {
	// Same packed bytes, different lengths, and different bytes must differ.
	ids := map[uint32]string{}
	for _, s := range []string{"a", "b", "ab", "abc", "abcd", " ab", "\n", "\n\n", ".", "..", "\x00", "\x00\x00"} {
		id := Approx(nil, s)[0]
		if prev, ok := ids[id]; ok {
			t.Errorf("%q and %q share id %d", prev, s, id)
		}
		ids[id] = s
	}
}

func TestApproxCharsPerToken(t *testing.T) {
	text := sampleText(50_000)
	ratio := float64(len(text)) / float64(CountApprox(text))
	if ratio < 3.2 || ratio > 4.8 {
		t.Errorf("bytes per token = %.2f, want about 4", ratio)
	}
}

func TestApproxPrefixProperty(t *testing.T) {
	base := sampleText(3_000)
	for _, n := range []int{0, 1, 2, 5, 17, 100, 999, 2500} {
		for _, tail := range []string{"X", " zz", "\n", "...", "qwertyuiop"} {
			other := base[:n] + tail
			assertSharedPrefix(t, base, other, n)
		}
	}
}

// assertSharedPrefix checks that a and b, equal on their first n bytes, agree
// on every token ending before byte n-1.
func assertSharedPrefix(t *testing.T, a, b string, n int) {
	t.Helper()
	ta, tb := Approx(nil, a), Approx(nil, b)
	end := 0
	for k := 0; end < len(a); k++ {
		end, _ = refNext(a, end)
		if end >= n-1 {
			return
		}
		if k >= len(tb) || ta[k] != tb[k] {
			t.Fatalf("prefix %d: token %d (ending at %d) differs", n, k, end)
		}
	}
}

func TestApproxAppendsWithoutAllocating(t *testing.T) {
	text := sampleText(20_000)
	dst := make([]uint32, 0, len(text))
	allocs := testing.AllocsPerRun(10, func() { dst = Approx(dst[:0], text) })
	if allocs != 0 {
		t.Errorf("Approx allocated %.0f times with a big dst", allocs)
	}
	if allocs := testing.AllocsPerRun(10, func() { CountApprox(text) }); allocs != 0 {
		t.Errorf("CountApprox allocated %.0f times", allocs)
	}
	pre := Approx([]uint32{7}, "hi")
	if len(pre) != 2 || pre[0] != 7 {
		t.Errorf("Approx did not append: %v", pre)
	}
}

func TestApproximateTokenizer(t *testing.T) {
	var tok Tokenizer = Approximate{}
	got, err := tok.Tokenize(context.Background(), "m", []byte("hello world"), nil)
	if err != nil || len(got) != 4 {
		t.Fatalf("Tokenize = %v, %v", got, err)
	}
	if tok.Exact() || tok.Name() != "approximate" {
		t.Errorf("Exact=%v Name=%q", tok.Exact(), tok.Name())
	}
}

// sampleText returns about n bytes of English-like prose with punctuation,
// newlines and numbers.
func sampleText(n int) string {
	const para = "The quick brown fox jumps over the lazy dog. In 2024, researchers " +
		"measured throughput on 8 GPUs; results varied (see Table 3).\n\n" +
		"    def handler(request):\n        return process(request.body)\n" +
		"Large language models serve many concurrent requests, and a shared prefix " +
		"cache lets them skip recomputing attention for repeated system prompts.\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	return b.String()[:n]
}

func FuzzApprox(f *testing.F) {
	f.Add("hello world", "hello there")
	f.Add("  \n\t..!!", "  \n\t..??")
	f.Add("h\xc3\xa9llo", "h\xc3")
	f.Fuzz(func(t *testing.T, a, b string) {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		ta := Approx(nil, a)
		if len(ta) != CountApprox(a) {
			t.Fatalf("CountApprox %d != len(Approx) %d", CountApprox(a), len(ta))
		}
		for _, id := range ta {
			if id >= VocabSize {
				t.Fatalf("id %d out of range", id)
			}
		}
		assertSharedPrefix(t, a, b, n)
	})
}

func BenchmarkApprox220KB(b *testing.B) {
	text := sampleText(220 << 10)
	dst := make([]uint32, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = Approx(dst[:0], text)
	}
}

func BenchmarkCountApprox220KB(b *testing.B) {
	text := sampleText(220 << 10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		CountApprox(text)
	}
}

// prose8000 returns English-like prose of exactly 8,000 tokens (about 32 KB),
// the decision-latency target's prompt.
func prose8000() string {
	text := sampleText(64 << 10)
	end := 0
	for k := 0; k < 8000; k++ {
		end, _ = refNext(text, end)
	}
	return text[:end]
}

func BenchmarkApprox32KB(b *testing.B) {
	text := prose8000()
	dst := make([]uint32, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = Approx(dst[:0], text)
	}
}

func BenchmarkApprox32KBNilDst(b *testing.B) {
	text := prose8000()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Approx(nil, text)
	}
}
