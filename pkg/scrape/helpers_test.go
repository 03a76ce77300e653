package scrape

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// recSink records every update.
type recSink struct {
	mu      sync.Mutex
	updates []Status
	keys    []string
}

func (r *recSink) UpdateScrape(key string, st Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, st)
	r.keys = append(r.keys, key)
}

func (r *recSink) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.updates)
}

func (r *recSink) last() (Status, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.updates) == 0 {
		return Status{}, false
	}
	return r.updates[len(r.updates)-1], true
}

// waitFor polls the last update until ok returns true, failing after 5s.
func (r *recSink) waitFor(t *testing.T, what string, ok func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if st, have := r.last(); have && ok(st) {
			return st
		}
		time.Sleep(2 * time.Millisecond)
	}
	st, _ := r.last()
	t.Fatalf("timed out waiting for %s; last status %+v", what, st)
	return Status{}
}

// Log messages of the transitions, as the tests match them.
const (
	msgFailing   = "metrics scrape failing"
	msgStale     = "scraped metrics stale"
	msgExcluded  = "endpoint excluded after"
	msgRecovered = "metrics scrape recovered"
)

// logLines captures log messages.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

// matching returns the captured lines containing any of subs, in order, as
// the first matching sub of each.
func (l *logLines) matching(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		for _, s := range subs {
			if strings.Contains(line, s) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// metricValue reads one kvpick series from telemetry.Registry.
func metricValue(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := telemetry.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m.GetLabel(), labels) {
				return m.GetGauge().GetValue() + m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func hasLabels[P interface {
	GetName() string
	GetValue() string
}](got []P, want map[string]string) bool {
	n := 0
	for _, p := range got {
		if v, ok := want[p.GetName()]; ok && v == p.GetValue() {
			n++
		}
	}
	return n == len(want)
}
