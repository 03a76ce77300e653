package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// scrapeError is a failed scrape with its telemetry reason.
type scrapeError struct {
	reason string
	err    error
}

func (e *scrapeError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *scrapeError) Unwrap() error { return e.err }

func reasonOf(err error) string {
	var se *scrapeError
	if errors.As(err, &se) {
		return se.reason
	}
	return telemetry.ScrapeReasonParse
}

// accept asks for the classic text format, which Parse reads.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// fetch GETs and parses one page within the scrape timeout.
func (s *Scraper) fetch(ctx context.Context, t Target) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return Sample{}, &scrapeError{telemetry.ScrapeReasonConnect, err}
	}
	req.Header.Set("Accept", accept)
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return Sample{}, &scrapeError{transportReason(err), err}
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return Sample{}, &scrapeError{telemetry.ScrapeReasonHTTPStatus,
			fmt.Errorf("GET %s: HTTP %d", t.URL, resp.StatusCode)}
	}
	sample, err := parseBody(t.Engine, resp.Body)
	if err != nil && reasonOf(err) == telemetry.ScrapeReasonParse {
		err = &scrapeError{telemetry.ScrapeReasonParse, fmt.Errorf("%s%s", req.URL.Path, describeParse(err, resp.Header.Get("Content-Type")))}
	}
	return sample, err
}

// describeParse adds what a page that is not Prometheus text most likely is:
// trtllm-serve answers /metrics with JSON iteration stats.
func describeParse(err error, contentType string) string {
	msg := ": " + errors.Unwrap(err).Error()
	if strings.Contains(contentType, "json") {
		msg += " (the page is JSON, not Prometheus text: trtllm-serve serves its metrics at /prometheus/metrics)"
	}
	return msg
}

// parseBody parses a bounded body, telling read failures (timeout, reset)
// apart from content the parser rejects.
func parseBody(engine Engine, body io.Reader) (Sample, error) {
	r := &trackingReader{r: io.LimitReader(body, maxBodyBytes+1)}
	sample, err := Parse(engine, r)
	switch {
	case r.err != nil:
		return Sample{}, &scrapeError{transportReason(r.err), fmt.Errorf("read body: %w", r.err)}
	case r.n > maxBodyBytes:
		return Sample{}, &scrapeError{telemetry.ScrapeReasonParse, fmt.Errorf("body exceeds %d bytes", maxBodyBytes)}
	case err != nil:
		return Sample{}, &scrapeError{telemetry.ScrapeReasonParse, err}
	}
	return sample, nil
}

func transportReason(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return telemetry.ScrapeReasonTimeout
	}
	return telemetry.ScrapeReasonConnect
}

// closeBody drains a bounded remainder so the connection can be reused.
func closeBody(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	_ = b.Close()
}

// trackingReader counts bytes and keeps the first non-EOF read error.
type trackingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (t *trackingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.n += int64(n)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}
