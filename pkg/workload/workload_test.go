package workload

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const miniTrace = `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}
{"timestamp": 500, "input_length": 700, "output_length": 3, "hash_ids": [0, 2]}

{"timestamp": 1000, "input_length": 1200, "output_length": 0, "hash_ids": [3, 4]}
`

func TestParseMooncake(t *testing.T) {
	w, err := ParseMooncake(strings.NewReader(miniTrace), TraceOptions{RateScale: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != 3 {
		t.Fatalf("requests = %d, want 3", len(w.Requests))
	}
	x := NewExpander()
	a, b, c := x.Tokens(&w.Requests[0]), x.Tokens(&w.Requests[1]), x.Tokens(&w.Requests[2])
	if len(a) != 1000 || len(b) != 700 || len(c) != 1200 {
		t.Fatalf("lengths %d %d %d, want 1000 700 1200", len(a), len(b), len(c))
	}
	if !reflect.DeepEqual(a[:512], b[:512]) {
		t.Error("shared hash id 0 does not give a shared 512-token prefix")
	}
	if reflect.DeepEqual(a[512:700], b[512:700]) {
		t.Error("different hash ids gave the same tokens")
	}
	if got := w.Requests[1].Arrival; got != 250*time.Millisecond {
		t.Errorf("arrival with rate scale 2 = %v, want 250ms", got)
	}
	if w.Requests[2].Output != 1 {
		t.Errorf("output 0 should become 1, got %d", w.Requests[2].Output)
	}
	// 1200 > 2 ids * 512: the extra 176 tokens are unique to the request.
	if n := len(w.Requests[2].Segments); n != 3 {
		t.Errorf("segments = %d, want 3", n)
	}
}

func TestParseMooncakeErrors(t *testing.T) {
	for _, in := range []string{
		`{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}`,
		`{"input_length": 10, "output_length": 1, "hash_ids": [1]}`,
		`{"timestamp": -1, "input_length": 10, "output_length": 1, "hash_ids": [1]}`,
		`not json`,
	} {
		if _, err := ParseMooncake(strings.NewReader(in), TraceOptions{}); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

func TestMooncakeRepeatSharesNothing(t *testing.T) {
	w, err := ParseMooncake(strings.NewReader(miniTrace), TraceOptions{Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != 6 {
		t.Fatalf("requests = %d, want 6", len(w.Requests))
	}
	first, second := w.Requests[0], w.Requests[3]
	x := NewExpander()
	a, b := x.Tokens(&first), x.Tokens(&second)
	if len(a) != len(b) || reflect.DeepEqual(a[:16], b[:16]) {
		t.Error("a repeat has the same leading tokens as the first pass")
	}
	if second.Arrival <= w.Requests[2].Arrival {
		t.Errorf("repeat starts at %v, before the first pass ends (%v)", second.Arrival, w.Requests[2].Arrival)
	}
	if st := w.Stats(); math.Abs(st.PrefixUpperBound-512.0*2/5800) > 1e-9 {
		t.Errorf("upper bound = %v, want %v", st.PrefixUpperBound, 512.0*2/5800)
	}
}

// The traces shipped in config/traces have the figures their README states
// (the conversation trace read gzipped, as it ships).
func TestShippedTraceStats(t *testing.T) {
	for _, tc := range []struct {
		file              string
		requests          int
		meanInput, hitMax float64
	}{
		{"mooncake_synthetic_trace.jsonl", 3993, 15325, 0.651},
		{"mooncake_conversation_trace.jsonl.gz", 12031, 12035, 0.374},
	} {
		w, err := LoadMooncake("../../config/traces/"+tc.file, TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if st.Requests != tc.requests || math.Abs(st.MeanInput-tc.meanInput) > 5 || math.Abs(st.PrefixUpperBound-tc.hitMax) > 0.005 {
			t.Errorf("%s: stats %+v, want %d requests, mean input ~%v, upper bound ~%v", tc.file, st, tc.requests, tc.meanInput, tc.hitMax)
		}
	}
}

// A gzipped trace reads as the plain one; a cut-off gzip stream is an error,
// not a shorter trace.
func TestMooncakeGzip(t *testing.T) {
	plain := []byte(`{"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [1, 2]}
{"timestamp": 5, "input_length": 700, "output_length": 4, "hash_ids": [1, 3]}
`)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := ParseMooncake(bytes.NewReader(plain), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseMooncake(bytes.NewReader(buf.Bytes()), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gzipped trace = %+v, want %+v", got, want)
	}
	if _, err := ParseMooncake(bytes.NewReader(buf.Bytes()[:buf.Len()-10]), TraceOptions{}); err == nil {
		t.Error("a cut-off gzip stream parsed without error")
	}
}

func TestSharedPrefix(t *testing.T) {
	g := SharedPrefix{Requests: 2000, Prefixes: 4, PrefixLen: 100, SuffixLen: 10, Share: 0.75, Output: 8,
		Arrivals: Arrivals{Rate: 50}}
	a, err := g.Generate(7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := g.Generate(7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different requests")
	}
	shared, prefixes := 0, map[uint64]bool{}
	for _, r := range a {
		if r.Class == "shared" {
			shared++
			prefixes[r.Segments[0].ID] = true
		}
	}
	if frac := float64(shared) / 2000; math.Abs(frac-0.75) > 0.04 || len(prefixes) != 4 {
		t.Errorf("shared fraction %v over %d prefixes, want ~0.75 over 4", frac, len(prefixes))
	}
	rate := float64(len(a)-1) / a[len(a)-1].Arrival.Seconds()
	if math.Abs(rate-50) > 5 {
		t.Errorf("rate = %v, want ~50", rate)
	}
}

// TestSharedPrefixZipf checks each prefix's share of the requests against
// 1/(k+1)^s normalised, and that bad exponents are refused.
func TestSharedPrefixZipf(t *testing.T) {
	const n, prefixes = 40000, 6
	for _, s := range []float64{0, 1, 1.5} {
		g := SharedPrefix{Requests: n, Prefixes: prefixes, PrefixLen: 10, SuffixLen: 1, Share: 1, Zipf: s, Output: 1,
			Arrivals: Arrivals{Rate: 100}}
		reqs, err := g.Generate(3)
		if err != nil {
			t.Fatalf("zipf %v: %v", s, err)
		}
		counts := map[uint64]int{}
		for _, r := range reqs {
			counts[r.Segments[0].ID]++
		}
		norm := 0.0
		for k := range prefixes {
			norm += math.Pow(float64(k+1), -s)
		}
		for k := range prefixes {
			want := math.Pow(float64(k+1), -s) / norm
			got := float64(counts[SegmentID(nsPrefix, uint64(k))]) / n
			if math.Abs(got-want) > 0.01 {
				t.Errorf("zipf %v: prefix %d drew %.3f of the requests, want %.3f", s, k, got, want)
			}
		}
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(1), 11} {
		g := SharedPrefix{Requests: 10, Prefixes: 3, PrefixLen: 10, Share: 1, Zipf: s, Output: 1, Arrivals: Arrivals{Rate: 1}}
		if _, err := g.Generate(1); err == nil || !strings.Contains(err.Error(), "zipf") {
			t.Errorf("zipf %v: error %v, want one naming the zipf exponent", s, err)
		}
	}
}

// TestSharedPrefixUniformUnchanged pins the uniform draw: Zipf 0 must keep
// the requests every earlier benchmark figure was measured on.
func TestSharedPrefixUniformUnchanged(t *testing.T) {
	g := SharedPrefix{Requests: 5, Prefixes: 150, PrefixLen: 10, SuffixLen: 1, Share: 1, Output: 1, Arrivals: Arrivals{Rate: 1}}
	reqs, err := g.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	rng := NewRand(1, 1)
	g.Arrivals.Times(rng, g.Requests, 0)
	for i, r := range reqs {
		rng.Float64() // the share draw
		if want := SegmentID(nsPrefix, uint64(rng.IntN(150))); r.Segments[0].ID != want {
			t.Fatalf("request %d: prefix %x, want %x (the uniform draw changed)", i, r.Segments[0].ID, want)
		}
	}
}

func TestBurstyArrivalsKeepTheRate(t *testing.T) {
	times := Arrivals{Rate: 20, Burstiness: 4}.Times(NewRand(1, 9), 20000, 0)
	rate := float64(len(times)-1) / times[len(times)-1].Seconds()
	if math.Abs(rate-20) > 2 {
		t.Errorf("rate = %v, want ~20", rate)
	}
	var sum, sq float64
	for i := 1; i < len(times); i++ {
		g := (times[i] - times[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(times) - 1)
	mean := sum / n
	if cv2 := (sq/n - mean*mean) / (mean * mean); math.Abs(cv2-4) > 0.8 {
		t.Errorf("squared CV = %v, want ~4", cv2)
	}
}

func TestMultiTurnExtendsPrefix(t *testing.T) {
	reqs, err := MultiTurn{Sessions: 3, Turns: 3, SystemLen: 50, UserLen: 20, Output: 10,
		ThinkTime: time.Second, Arrivals: Arrivals{Rate: 1}}.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	w := Merge("mt", reqs)
	bySession := map[string][]Request{}
	for _, r := range w.Requests {
		bySession[r.Session] = append(bySession[r.Session], r)
	}
	x := NewExpander()
	for s, turns := range bySession {
		for k := 1; k < len(turns); k++ {
			prev, cur := x.Tokens(&turns[k-1]), x.Tokens(&turns[k])
			if len(cur) != len(prev)+30 || !reflect.DeepEqual(cur[:len(prev)], prev) {
				t.Errorf("%s turn %d does not extend turn %d", s, k, k-1)
			}
		}
	}
}

func TestBriefScenario(t *testing.T) {
	w, err := Brief{Rate: 5, Requests: 1000, ImportDocs: 20, ImportAt: 100 * time.Second, ImportWindow: 5 * time.Second}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range w.Requests {
		count[r.Class]++
		if r.Class == "document" || r.Class == "import" {
			if r.InputLen() != BriefDocLen {
				t.Fatalf("document of %d tokens", r.InputLen())
			}
		}
	}
	if count["import"] != 20 || math.Abs(float64(count["shared"])/1000-0.8) > 0.04 {
		t.Errorf("classes %v", count)
	}
	for i := 1; i < len(w.Requests); i++ {
		if w.Requests[i].Arrival < w.Requests[i-1].Arrival || w.Requests[i].ID != i {
			t.Fatal("requests not in arrival order with sequential ids")
		}
	}
}

func TestExpanderBound(t *testing.T) {
	x := &Expander{MaxCached: 1000}
	for i := range 50 {
		r := Request{Segments: []Segment{{ID: SegmentID(1, uint64(i)), Len: 300}}}
		if got := x.Tokens(&r); len(got) != 300 || got[7] != Token(r.Segments[0].ID, 7) {
			t.Fatal("wrong expansion")
		}
		if x.cached > 1000 {
			t.Fatalf("cache holds %d tokens, bound 1000", x.cached)
		}
	}
}

func TestAppendTextKeepsPrefixesAndAveragesFourBytes(t *testing.T) {
	x := NewExpander()
	a := x.Tokens(&Request{Segments: []Segment{{ID: 1, Len: 1000}, {ID: 2, Len: 1000}}})
	b := x.Tokens(&Request{Segments: []Segment{{ID: 1, Len: 1000}, {ID: 3, Len: 1000}}})
	ta, tb := AppendText(nil, a), AppendText(nil, b)
	common := 0
	for common < min(len(ta), len(tb)) && ta[common] == tb[common] {
		common++
	}
	prefix := len(AppendText(nil, a[:1000]))
	if common < prefix || common > prefix+6 {
		t.Fatalf("shared text prefix %d bytes, want the first 1000 tokens' %d (+ a partial word)", common, prefix)
	}
	if perTok := float64(len(ta)) / float64(len(a)); perTok < 3.7 || perTok > 4.3 {
		t.Fatalf("%.2f bytes per token, want about 4", perTok)
	}
	if string(AppendText(nil, []uint32{7, 7})) != string(AppendText(nil, []uint32{7}))+string(AppendText(nil, []uint32{7})) {
		t.Fatal("a token's word depends on more than its id")
	}
}

func TestJitter(t *testing.T) {
	reqs, err := SharedPrefix{Requests: 400, Prefixes: 4, PrefixLen: 64, SuffixLen: 16, Output: 5,
		Arrivals: Arrivals{Rate: 200}}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	w := Merge("sp", reqs)
	orig := slices.Clone(w.Requests)
	const max = 20 * time.Millisecond // several mean gaps: requests change places
	j := w.Jitter(max, 7)
	if !reflect.DeepEqual(w.Requests, orig) {
		t.Fatal("Jitter modified the workload it was given")
	}
	if len(j.Requests) != len(orig) {
		t.Fatalf("%d requests after jitter, want %d", len(j.Requests), len(orig))
	}
	// Every request is there once, moved by [0, max), with its prompt.
	byPrompt := map[string]Request{}
	key := func(r Request) string { return fmt.Sprint(r.Segments, r.Output, r.Session, r.Class) }
	for _, r := range orig {
		byPrompt[key(r)] = r
	}
	moved := 0
	for i, r := range j.Requests {
		if r.ID != i {
			t.Fatalf("request %d has ID %d", i, r.ID)
		}
		if i > 0 && r.Arrival < j.Requests[i-1].Arrival {
			t.Fatalf("request %d arrives before request %d", i, i-1)
		}
		o, ok := byPrompt[key(r)]
		if !ok {
			t.Fatalf("request %d's prompt is not in the original", i)
		}
		if d := r.Arrival - o.Arrival; d < 0 || d >= max {
			t.Fatalf("request %d moved by %v, want [0, %v)", i, d, max)
		}
		if o.ID != i {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no request changed places under a jitter of several mean gaps")
	}
	if again := w.Jitter(max, 7); !reflect.DeepEqual(again, j) {
		t.Error("the same seed gave a different jitter")
	}
	if other := w.Jitter(max, 8); reflect.DeepEqual(other, j) {
		t.Error("seeds 7 and 8 gave the same jitter")
	}
	if same := w.Jitter(0, 7); !reflect.DeepEqual(same, w) {
		t.Error("a zero jitter changed the workload")
	}
}
