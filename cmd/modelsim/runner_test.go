package main

import (
	"testing"
	"time"
)

func TestStepStartCatchesUpWithinBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		now, due  time.Time
		wantStart time.Time
		wantLost  time.Duration
	}{
		{"after idling: now", t0, time.Time{}, t0, 0},
		{"woke early or on time: now", t0, t0.Add(ms), t0, 0},
		{"woke late: when the last step was due", t0.Add(700 * time.Microsecond), t0, t0, 0},
		{"at the bound: still caught up", t0.Add(maxCatchUp), t0, t0, 0},
		{"past the bound: now, lag counted lost", t0.Add(maxCatchUp + ms), t0, t0.Add(maxCatchUp + ms), maxCatchUp + ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, lost := stepStart(tc.now, tc.due)
			if !start.Equal(tc.wantStart) || lost != tc.wantLost {
				t.Fatalf("stepStart = %v, %v; want %v, %v", start.Sub(t0), lost, tc.wantStart.Sub(t0), tc.wantLost)
			}
		})
	}
}
