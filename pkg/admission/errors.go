package admission

import (
	"errors"
	"net/http"
	"time"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// Reasons a request leaves the queue without dispatch; they are the metric
// label values and, for the 429s, the apierr types.
const (
	reasonFull     = apierr.TypeQueueFull
	reasonTimeout  = apierr.TypeQueueTimeout
	reasonShed     = apierr.TypeShed
	reasonCanceled = "canceled"
	reasonShutdown = "shutdown"
)

func errQueueFull(limit int) *apierr.Error {
	return apierr.New(http.StatusTooManyRequests, apierr.TypeQueueFull,
		"admission queue is full (%d requests) and this request's priority does not displace a queued one", limit)
}

func errQueueTimeout(wait time.Duration) *apierr.Error {
	return apierr.New(http.StatusTooManyRequests, apierr.TypeQueueTimeout,
		"request waited the admission queue's maximum of %s while every eligible endpoint stayed above the queue threshold", wait)
}

func errShed(limit int) *apierr.Error {
	return apierr.New(http.StatusTooManyRequests, apierr.TypeShed,
		"sheddable request dropped: admission queue is full (%d requests) and a higher-priority request arrived", limit)
}

func errShutdown() *apierr.Error {
	return apierr.Unavailable("endpoint picker is shutting down; the queued request was not dispatched")
}

// isFull reports whether err is the queue_full rejection (not a misuse error).
func isFull(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Type == apierr.TypeQueueFull
}
