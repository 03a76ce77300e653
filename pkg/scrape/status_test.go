package scrape

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestNextStatusAndTransitionLog(t *testing.T) {
	o := Options{StaleAfter: 50 * time.Millisecond, ExcludeAfter: 3}.withDefaults()
	t0 := time.Unix(1000, 0)
	boom := &scrapeError{"http_status", errors.New("HTTP 500")}
	steps := []struct {
		at                      time.Duration
		err                     error
		wantFail                int
		wantStale, wantExcluded bool
		wantLog                 string // message logged by this step, "" for none
	}{
		{0, nil, 0, false, false, ""}, // first success logs only at V(1)
		{10 * time.Millisecond, nil, 0, false, false, ""},
		{20 * time.Millisecond, boom, 1, false, false, msgFailing},
		{30 * time.Millisecond, boom, 2, false, false, ""}, // repeated failure: silent
		{70 * time.Millisecond, boom, 3, true, true, msgExcluded},
		{80 * time.Millisecond, boom, 4, true, true, ""},
		{90 * time.Millisecond, nil, 0, false, false, msgRecovered},
		{100 * time.Millisecond, boom, 1, false, false, msgFailing},
		{200 * time.Millisecond, boom, 2, true, false, msgStale},
	}
	logs := &logLines{}
	s := New(o, nil, logs.logger())
	var st Status
	for i, step := range steps {
		before := len(logs.matching(""))
		next := nextStatus(st, Sample{Running: i}, step.err, t0.Add(step.at), s.opts)
		s.logTransition(Target{Key: "k"}, st, next, i == 0, step.err)
		st = next
		if st.ConsecutiveFailures != step.wantFail || st.Stale != step.wantStale || st.Excluded != step.wantExcluded {
			t.Errorf("step %d: status %+v", i, st)
		}
		if !st.HasSample || (step.err != nil) == (st.LastError == "") {
			t.Errorf("step %d: HasSample=%v LastError=%q", i, st.HasSample, st.LastError)
		}
		lines := logs.matching("")
		switch {
		case step.wantLog == "" && len(lines) != before:
			t.Errorf("step %d: unexpected log", i)
		case step.wantLog != "" && (len(lines) != before+1 || len(logs.matching(step.wantLog)) == 0):
			t.Errorf("step %d: want one %q log line, have %d new", i, step.wantLog, len(lines)-before)
		}
	}
	if !strings.HasPrefix(st.LastError, "http_status: ") {
		t.Errorf("LastError %q lacks reason", st.LastError)
	}
}

// A refused connection (nothing listening: the engine died) excludes the
// endpoint on the first failure; the next success brings it back.
func TestRefusedExcludesAtOnce(t *testing.T) {
	o := Options{ExcludeAfter: 5}.withDefaults()
	t0 := time.Unix(1000, 0)
	ok := nextStatus(Status{}, Sample{Running: 1}, nil, t0, o)
	refusedErr := &scrapeError{"connect", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", refusedErr, true},
		{"timeout", &scrapeError{"timeout", context.DeadlineExceeded}, false},
		{"http status", &scrapeError{"http_status", errors.New("HTTP 500")}, false},
	}
	for _, tc := range cases {
		st := nextStatus(ok, Sample{}, tc.err, t0.Add(time.Millisecond), o)
		if st.Excluded != tc.want || st.ConsecutiveFailures != 1 {
			t.Errorf("%s: excluded %v after %d failure(s), want %v", tc.name, st.Excluded, st.ConsecutiveFailures, tc.want)
		}
		if back := nextStatus(st, Sample{}, nil, t0.Add(2*time.Millisecond), o); back.Excluded {
			t.Errorf("%s: still excluded after a success", tc.name)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	tests := []struct {
		in                Options
		interval, timeout time.Duration
		stale             time.Duration
		excludeAfter      int
	}{
		{Options{}, 100 * time.Millisecond, time.Second, 2 * time.Second, 5},
		{Options{Interval: 10 * time.Millisecond, Timeout: time.Second}, 10 * time.Millisecond, 100 * time.Millisecond, 2 * time.Second, 5},
		{Options{Interval: time.Second, Timeout: -1, StaleAfter: 5 * time.Second, ExcludeAfter: 2}, time.Second, time.Second, 5 * time.Second, 2},
	}
	for i, tt := range tests {
		o := tt.in.withDefaults()
		if o.Interval != tt.interval || o.Timeout != tt.timeout || o.StaleAfter != tt.stale || o.ExcludeAfter != tt.excludeAfter || o.Client == nil {
			t.Errorf("%d: withDefaults = %+v", i, o)
		}
	}
}
