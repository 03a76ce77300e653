package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// The lexer reads the few lines of a Prometheus text exposition we care
// about. It is our own (not expfmt) because a page has thousands of histogram
// lines we only need to skip: the metric name is checked before any label or
// value is parsed, and nothing is allocated for lines that are skipped.

var (
	errUnterminated = errors.New("unterminated quoted string")
	errNoValue      = errors.New("missing sample value")
	errNoName       = errors.New("missing metric name")
	errLabelSyntax  = errors.New("malformed label set")
)

// pair is one label; slices point into the line or, when unescaped, into a
// fresh buffer.
type pair struct{ name, value []byte }

// labelSet is a parsed label set, looked up by name (sets are small).
type labelSet []pair

// get returns the value of label name.
func (ls labelSet) get(name string) ([]byte, bool) {
	for _, p := range ls {
		if string(p.name) == name {
			return p.value, true
		}
	}
	return nil, false
}

// sampleLine is one lexed sample line.
type sampleLine struct {
	name   []byte
	labels labelSet
	value  float64
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func trimBlank(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && (isBlank(b[len(b)-1]) || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// lineName returns a sample line's metric name without parsing the rest, and
// whether the whole line must be lexed to find it (UTF-8 quoted names).
func lineName(b []byte) (name []byte, quoted bool) {
	if b[0] == '{' {
		return nil, true
	}
	end := bytes.IndexAny(b, "{ \t")
	if end < 0 {
		return b, false
	}
	return b[:end], false
}

// lexLine lexes a whole sample line: name, labels, value; a trailing
// timestamp is ignored. buf is reused for the label slice.
func lexLine(b []byte, buf labelSet) (sampleLine, error) {
	var sl sampleLine
	i := 0
	if b[0] != '{' {
		i = bytes.IndexAny(b, "{ \t")
		if i < 0 {
			return sl, errNoValue
		}
		sl.name = b[:i]
	}
	if b[i] == '{' {
		end, err := closingBrace(b, i+1)
		if err != nil {
			return sl, err
		}
		var qname []byte
		sl.labels, qname, err = lexLabels(b[i+1:end], buf[:0])
		if err != nil {
			return sl, err
		}
		if sl.name == nil {
			sl.name = qname
		}
		i = end + 1
	}
	if len(sl.name) == 0 {
		return sl, errNoName
	}
	v, err := lexValue(b[i:])
	sl.value = v
	return sl, err
}

// lexValue parses the first blank-separated token of rest as a float.
func lexValue(rest []byte) (float64, error) {
	rest = trimBlank(rest)
	if end := bytes.IndexAny(rest, " \t"); end >= 0 {
		rest = rest[:end]
	}
	if len(rest) == 0 {
		return 0, errNoValue
	}
	v, err := strconv.ParseFloat(string(rest), 64)
	if err != nil {
		return 0, fmt.Errorf("bad sample value %q", truncate(rest))
	}
	return v, nil
}

// closingBrace finds the '}' that ends a label set starting at from,
// skipping quoted strings.
func closingBrace(b []byte, from int) (int, error) {
	for i := from; i < len(b); i++ {
		switch b[i] {
		case '"':
			j, err := skipQuoted(b, i)
			if err != nil {
				return 0, err
			}
			i = j - 1
		case '}':
			return i, nil
		}
	}
	return 0, errLabelSyntax
}

// skipQuoted returns the index just past the quoted string opening at b[i].
func skipQuoted(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errUnterminated
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}
