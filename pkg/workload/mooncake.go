package workload

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// MooncakeBlock is the token length one Mooncake hash id stands for.
const MooncakeBlock = 512

// mooncakeNS is the segment namespace of Mooncake hash ids.
const mooncakeNS = 0x6d6f6f6e // "moon"

// mooncakeLine is one line of a Mooncake trace.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  int      `json:"input_length"`
	OutputLength int      `json:"output_length"`
	HashIDs      []uint64 `json:"hash_ids"`
}

// TraceOptions adjusts a replayed trace.
type TraceOptions struct {
	// RateScale multiplies the arrival rate (timestamps are divided by it);
	// <= 0 means 1.
	RateScale float64
	// Repeat replays the trace this many times back to back (<= 1: once).
	// Repetition r expands every hash id as Segment variant r (shifted
	// tokens), so repeats share no prefix with each other, and starts where
	// the previous ended plus the mean gap.
	Repeat int
	// Limit keeps only the first Limit requests, after repeating (0: all).
	Limit int
}

// ParseMooncake reads a Mooncake trace: one JSON object a line with
// timestamp (ms since start), input_length, output_length and hash_ids (the
// prompt's 512-token blocks in order). Each hash id expands into 512
// deterministic tokens, the last block cut to input_length; when
// input_length is longer than the ids cover, the extra tokens are unique to
// the request. Blank lines are skipped; any other malformed line is an error
// naming its line number. A gzip stream is read decompressed (a JSON line
// never starts with gzip's magic bytes), so traces can ship compressed.
func ParseMooncake(r io.Reader, o TraceOptions) (Workload, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Workload{}, fmt.Errorf("mooncake trace: gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	lines, err := readMooncake(r)
	if err != nil {
		return Workload{}, err
	}
	return buildMooncake(lines, o), nil
}

// LoadMooncake reads a Mooncake trace file (see ParseMooncake).
func LoadMooncake(path string, o TraceOptions) (Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return Workload{}, fmt.Errorf("mooncake trace: %w", err)
	}
	defer f.Close()
	w, err := ParseMooncake(f, o)
	if err != nil {
		return Workload{}, fmt.Errorf("%s: %w", path, err)
	}
	w.Name = "trace"
	return w, nil
}

func readMooncake(r io.Reader) ([]mooncakeLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []mooncakeLine
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		var l mooncakeLine
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("mooncake trace line %d: %w", n, err)
		}
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("mooncake trace line %d: %w", n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mooncake trace: %w", err)
	}
	return out, nil
}

func (l *mooncakeLine) check() error {
	switch {
	case l.Timestamp == nil:
		return fmt.Errorf("timestamp missing")
	case *l.Timestamp < 0 || *l.Timestamp > 1e12:
		return fmt.Errorf("timestamp %v out of range", *l.Timestamp)
	case l.InputLength <= 0 || l.InputLength > 1<<24:
		return fmt.Errorf("input_length %d out of range", l.InputLength)
	case l.OutputLength < 0 || l.OutputLength > 1<<20:
		return fmt.Errorf("output_length %d out of range", l.OutputLength)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func buildMooncake(lines []mooncakeLine, o TraceOptions) Workload {
	scale := o.RateScale
	if scale <= 0 {
		scale = 1
	}
	var span float64
	for i := range lines {
		span = max(span, *lines[i].Timestamp)
	}
	gap := 0.0
	if len(lines) > 1 {
		gap = span / float64(len(lines)-1)
	}
	reqs := make([]Request, 0, len(lines)*max(o.Repeat, 1))
	for rep := 0; rep < max(o.Repeat, 1); rep++ {
		offset := float64(rep) * (span + gap)
		for i := range lines {
			l := &lines[i]
			ms := (offset + *l.Timestamp) / scale
			reqs = append(reqs, Request{
				ID:       len(reqs),
				Arrival:  time.Duration(ms * float64(time.Millisecond)),
				Segments: mooncakeSegments(l, uint32(rep), len(reqs)),
				Output:   max(l.OutputLength, 1),
				Class:    "trace",
			})
		}
	}
	w := Merge("trace", reqs)
	if o.Limit > 0 && o.Limit < len(w.Requests) {
		w.Requests = w.Requests[:o.Limit]
	}
	return w
}

// mooncakeSegments maps hash ids to 512-token segments cut to input_length.
func mooncakeSegments(l *mooncakeLine, variant uint32, n int) []Segment {
	segs := make([]Segment, 0, len(l.HashIDs)+1)
	left := l.InputLength
	for _, id := range l.HashIDs {
		if left <= 0 {
			break
		}
		k := min(left, MooncakeBlock)
		segs = append(segs, Segment{ID: SegmentID(mooncakeNS, id), Len: k, Variant: variant})
		left -= k
	}
	if left > 0 {
		segs = append(segs, Segment{ID: SegmentID(mooncakeNS+1, uint64(n)), Len: left})
	}
	return segs
}
