package scrape

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sync"
)

// maxLineBytes bounds one exposition line; longer lines are a parse error.
const maxLineBytes = 1 << 20

var scanBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Parse maps a Prometheus text exposition of engine into a Sample (ScrapedAt
// is left zero). Metrics other than the engine's are skipped unparsed. It
// returns a *MetricNotFoundError when the waiting or running metric is absent;
// absent capacity, usage or LoRA metrics leave their fields zero. Safe for
// concurrent use.
func Parse(engine Engine, r io.Reader) (Sample, error) {
	m, err := mappingFor(engine)
	if err != nil {
		return Sample{}, err
	}
	buf := scanBufs.Get().(*[]byte)
	defer scanBufs.Put(buf)
	sc := bufio.NewScanner(r)
	sc.Buffer(*buf, maxLineBytes)
	var p parser
	p.m = m
	for n := 1; sc.Scan(); n++ {
		if err := p.line(sc.Bytes()); err != nil {
			return Sample{}, fmt.Errorf("parse metrics line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Sample{}, fmt.Errorf("read metrics: %w", err)
	}
	return p.acc.sample(m)
}

type parser struct {
	m      *mapping
	acc    accum
	labels [16]pair // reused label storage
}

// line handles one line: comments, blanks and other metrics are skipped.
func (p *parser) line(b []byte) error {
	b = trimBlank(b)
	if len(b) == 0 || b[0] == '#' {
		return nil
	}
	name, quoted := lineName(b)
	if !quoted {
		if _, ok := p.m.handlers[string(name)]; !ok {
			return nil
		}
	}
	sl, err := lexLine(b, p.labels[:0])
	if err != nil {
		if quoted {
			return nil // a line we cannot even name is not one of ours
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	h, ok := p.m.handlers[string(sl.name)]
	if !ok || math.IsNaN(sl.value) {
		return nil
	}
	h(&p.acc, sl.labels, sl.value)
	return nil
}
