package testutil

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// Load sends requests through real ext_proc streams as a gateway does: an
// open loop at Rate per second (arrivals do not wait for answers), each
// request picked by Body and sent through the picker Client returns at that
// moment (a test swaps pickers there, or spreads requests over replicas).
type Load struct {
	Rate    float64                         // arrivals per second
	Workers int                             // requests in flight at most; an arrival finding none free is counted as Dropped
	Body    func(i int) []byte              // the i-th request's body (a completions request)
	Client  func(i int) *envoyclient.Client // the picker for the i-th request; nil: counted as NoPicker
	HTTP    *http.Client                    // to the endpoints
	Timeout time.Duration                   // per request (default 30 s)
	stats   LoadStats
	mu      sync.Mutex
}

// LoadStats counts what happened to the arrivals. Safe to read with Stats.
type LoadStats struct {
	Sent, Dropped, NoPicker int64
	Status                  map[int]int64 // HTTP status the client saw (the picker's refusals included)
	Errors                  map[string]int64
	// TTFT is each sent request's time from the route call to the first
	// response body bytes; a refusal or error counts as +Inf (math.MaxInt64).
	TTFT []time.Duration
}

// TTFTQuantile is the q-quantile (0 < q <= 1) of TTFT by rank, refusals
// included as +Inf; 0 when nothing was sent.
func (s LoadStats) TTFTQuantile(q float64) time.Duration {
	if len(s.TTFT) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(s.TTFT))
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// Stats returns a copy of the counts so far.
func (l *Load) Stats() LoadStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := LoadStats{Sent: l.stats.Sent, Dropped: l.stats.Dropped, NoPicker: l.stats.NoPicker,
		Status: map[int]int64{}, Errors: map[string]int64{}, TTFT: slices.Clone(l.stats.TTFT)}
	for k, v := range l.stats.Status {
		out.Status[k] = v
	}
	for k, v := range l.stats.Errors {
		out.Errors[k] = v
	}
	return out
}

// Run sends arrivals until ctx ends, then waits for those in flight.
func (l *Load) Run(ctx context.Context) {
	slots := make(chan int, l.Workers)
	var wg sync.WaitGroup
	for range l.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range slots {
				l.one(i)
			}
		}()
	}
	start, sent := time.Now(), 0
	for ctx.Err() == nil {
		due := int(time.Since(start).Seconds() * l.Rate)
		for ; sent < due; sent++ {
			select {
			case slots <- sent:
			default:
				l.count(func(s *LoadStats) { s.Dropped++ })
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond):
		}
	}
	close(slots)
	wg.Wait()
}

func (l *Load) one(i int) {
	c := l.Client(i)
	if c == nil {
		l.count(func(s *LoadStats) { s.NoPicker++ })
		return
	}
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := c.Do(ctx, l.HTTP, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: l.Body(i)})
	l.count(func(s *LoadStats) {
		s.Sent++
		ttft := time.Duration(math.MaxInt64)
		defer func() { s.TTFT = append(s.TTFT, ttft) }()
		if err != nil {
			s.Errors[errKind(err)]++
			return
		}
		s.Status[res.Status]++
		if res.Status == http.StatusOK {
			ttft = res.TTFT
		}
	})
}

func (l *Load) count(f func(*LoadStats)) {
	l.mu.Lock()
	if l.stats.Status == nil {
		l.stats.Status, l.stats.Errors = map[int]int64{}, map[string]int64{}
	}
	f(&l.stats)
	l.mu.Unlock()
}

// errKind names an error by its outermost cause, so counts stay few.
func errKind(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	msg := err.Error()
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}

// Picked is an atomically swappable picker client, for Load.Client.
type Picked struct {
	p atomic.Pointer[envoyclient.Client]
}

// Set makes c the picker new requests go to (nil: none is up).
func (p *Picked) Set(c *envoyclient.Client) { p.p.Store(c) }

// Get returns the current picker client.
func (p *Picked) Get(int) *envoyclient.Client { return p.p.Load() }

// DialPicker opens an Envoy-like ext_proc client to a picker at addr
// (plaintext, 10 s to connect), closed when t ends.
func DialPicker(t testing.TB, addr string) *envoyclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := envoyclient.Dial(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
