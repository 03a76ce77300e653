package scrape

import (
	"errors"
	"syscall"
	"time"
)

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
	next.Excluded = next.ConsecutiveFailures >= o.ExcludeAfter || refused(err)
	return next
}

// refused reports a connection refused: nothing listens on the engine's port,
// so requests sent there fail too. Unlike a timeout or a bad page it is never
// a slow engine, so it excludes the endpoint at once rather than after
// ExcludeAfter failures (the next successful scrape brings it back).
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

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
