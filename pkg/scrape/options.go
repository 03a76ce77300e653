package scrape

import (
	"net/http"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// defaults are the configuration's (api/v1alpha1, their one source), for
// Options fields left zero.
var defaults = v1.Default().Scrape

// maxBodyBytes bounds a metrics page; a larger one is a parse failure.
const maxBodyBytes = 16 << 20

// Options tune the scraper. Zero (or negative) fields take the defaults.
type Options struct {
	Interval time.Duration // between scrape starts of one endpoint; default 100ms
	// Timeout bounds one scrape; default 1s, clamped to at most 10*Interval so
	// a hung endpoint cannot hold its loop for long.
	Timeout time.Duration
	// StaleAfter: a sample older than this is stale and its load signals are
	// not trusted; default 2s.
	StaleAfter time.Duration
	// ExcludeAfter consecutive failures mark the endpoint excluded; default 5.
	ExcludeAfter int
	Client       *http.Client // default: a keep-alive client shared by all loops
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = defaults.Interval.Duration
	}
	if o.Timeout <= 0 {
		o.Timeout = defaults.Timeout.Duration
	}
	o.Timeout = min(o.Timeout, 10*o.Interval)
	if o.StaleAfter <= 0 {
		o.StaleAfter = defaults.StaleAfter.Duration
	}
	if o.ExcludeAfter <= 0 {
		o.ExcludeAfter = defaults.ExcludeAfter
	}
	if o.Client == nil {
		o.Client = defaultClient()
	}
	return o
}

// defaultClient keeps one idle connection per endpoint: every endpoint is
// polled ten times a second, so reconnecting each time would dominate.
func defaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no global cap: one per endpoint, however many
	tr.MaxIdleConnsPerHost = 2
	tr.IdleConnTimeout = 30 * time.Second
	return &http.Client{Transport: tr}
}
