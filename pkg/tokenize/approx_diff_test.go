package tokenize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// assertMatchesRef fails unless Approx and CountApprox agree with the
// reference implementation on text, id for id.
func assertMatchesRef(t *testing.T, text string) {
	t.Helper()
	want := refApprox(nil, text)
	got := Approx(nil, text)
	if !slices.Equal(got, want) {
		k := 0
		for k < len(got) && k < len(want) && got[k] == want[k] {
			k++
		}
		t.Fatalf("Approx(%q): %d ids, want %d; first difference at id %d", clip(text), len(got), len(want), k)
	}
	if n := CountApprox(text); n != len(want) {
		t.Fatalf("CountApprox(%q) = %d, want %d", clip(text), n, len(want))
	}
}

// clip shortens long texts in failure messages.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func TestApproxMatchesReferenceCases(t *testing.T) {
	cases := []string{
		"", "a", " ", "  ", " a", "a ", ".", "\x00", "\xff", "_", "é",
		"hello world", "  two", "\t x", "x...!!", "         y", "trailing ",
		"\n\n \n x", "a \tb", " \x80", "a.b,c;d", "1234567890",
		strings.Repeat(" ", 200), strings.Repeat("\n", 130), strings.Repeat(" ", 63) + "x",
		strings.Repeat(".", 200), strings.Repeat("a", 200), strings.Repeat("é", 100),
		strings.Repeat(" a", 100), strings.Repeat("a ", 100), strings.Repeat(" \n", 100),
		strings.Repeat("ab.", 70), strings.Repeat("\t ", 70) + "w",
		sampleText(10_000),
	}
	for _, c := range cases {
		assertMatchesRef(t, c)
	}
}

// TestApproxMatchesReferenceAtEdges puts every short pattern at every offset
// around the 64-byte block edges and the 8-byte load tail.
func TestApproxMatchesReferenceAtEdges(t *testing.T) {
	pats := []string{" x", "abcde", "  y", " abcdefghi", ".....", "\t\t\t\t\t\t\t\t\t ", "      ",
		"x ", " ", "é é", "_9", "a.", " \n"}
	fills := []string{"a", " ", ".", "\n", "\xc3"}
	for _, fill := range fills {
		for _, pat := range pats {
			for off := 48; off < 140; off++ {
				pre := strings.Repeat(fill, off)
				assertMatchesRef(t, pre+pat)
				assertMatchesRef(t, pre+pat+strings.Repeat(fill, 70))
			}
		}
	}
}

// TestApproxMatchesReferenceRandom compares texts drawn from small alphabets
// that make every class transition and run length common.
func TestApproxMatchesReferenceRandom(t *testing.T) {
	alphabets := []string{"a ", "a .", "ab \n\t.", " \t", "a\xc3\xa9 ,", "x_1 \r\n!?", "\x00\x7f\x80\xff _"}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 600)
	for i := 0; i < 3000; i++ {
		alpha := alphabets[i%len(alphabets)]
		buf = buf[:0]
		for n := rng.IntN(600); n > 0; n-- {
			buf = append(buf, alpha[rng.IntN(len(alpha))])
		}
		assertMatchesRef(t, string(buf))
	}
}

func TestApproxEveryBytePair(t *testing.T) {
	var b strings.Builder
	for x := 0; x < 256; x++ {
		for y := 0; y < 256; y++ {
			b.WriteByte(byte(x))
			b.WriteByte(byte(y))
			b.WriteByte(' ')
		}
	}
	assertMatchesRef(t, b.String())
}

func FuzzApproxMatchesReference(f *testing.F) {
	for _, s := range []string{
		"hello world", " the cat sat.\n\n  def f(x):\n\treturn x", "h\xc3\xa9llo \xff\xfe w\x80rd",
		strings.Repeat(" ", 70) + "x", strings.Repeat("ab ", 30), strings.Repeat(".,;", 25) + " z",
		strings.Repeat("\t\n ", 30), sampleText(300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		assertMatchesRef(t, text)
		// Shift the text across the block grid too.
		assertMatchesRef(t, strings.Repeat("a", 61)+" "+text)
	})
}
