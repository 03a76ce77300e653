package scrape

import "time"

// health is the coarse state whose changes are logged.
type health int

const (
	healthNew health = iota // no attempt yet
	healthOK
	healthFailing // failures, but the sample is still fresh (or none yet)
	healthStale
	healthExcluded
)

func (h health) String() string {
	return [...]string{"new", "ok", "failing", "stale", "excluded"}[h]
}

// nextStatus folds one attempt into the status: a success replaces the
// sample and resets failures; a failure keeps the sample and counts.
func nextStatus(prev Status, s Sample, err error, now time.Time, o Options) Status {
	next := prev
	if err == nil {
		s.ScrapedAt = now
		next = Status{Sample: s, HasSample: true}
	} else {
		next.LastError = err.Error()
		next.ConsecutiveFailures++
	}
	next.Stale = isStale(next, now, o.StaleAfter)
	next.Excluded = next.ConsecutiveFailures >= o.ExcludeAfter
	return next
}

// isStale: no sample at all, or one older than staleAfter.
func isStale(st Status, now time.Time, staleAfter time.Duration) bool {
	return !st.HasSample || now.Sub(st.Sample.ScrapedAt) > staleAfter
}

func healthOf(st Status) health {
	switch {
	case st.Excluded:
		return healthExcluded
	case st.ConsecutiveFailures == 0:
		return healthOK
	case st.Stale && st.HasSample:
		return healthStale
	}
	return healthFailing
}

// stateLabel is the telemetry state: ok, stale or excluded.
func stateLabel(st Status) string {
	switch {
	case st.Excluded:
		return "excluded"
	case st.Stale:
		return "stale"
	}
	return "ok"
}
