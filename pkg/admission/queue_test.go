package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// slots is a capacity predicate that reserves one slot per dispatched item,
// the way the real caller reserves prefill tokens.
type slots struct {
	mu       sync.Mutex
	free     int
	inFlight int
	maxSeen  int
	allow    func(*Item[string]) bool // optional extra rule
}

func (s *slots) take(it *Item[string]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free == 0 || (s.allow != nil && !s.allow(it)) {
		return false
	}
	s.free--
	s.inFlight++
	s.maxSeen = max(s.maxSeen, s.inFlight)
	return true
}

func (s *slots) put(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free += n
	s.inFlight = max(s.inFlight-n, 0)
}

type result struct {
	name string
	err  error
}

// admitAsync runs Admit in a goroutine and waits until the item is queued.
func admitAsync(t *testing.T, ctx context.Context, q *Queue[string], it *Item[string], out chan<- result) {
	t.Helper()
	before := q.Len()
	go func() { out <- result{it.Value, q.Admit(ctx, it)} }()
	waitFor(t, func() bool { return q.Len() > before }, "item queued")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func recv(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no Admit returned")
		return result{}
	}
}

func noResult(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned early: %v", r.name, r.err)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestAdmitImmediate(t *testing.T) {
	pool := uniquePool("t-immediate")
	s := &slots{free: 1}
	q := NewQueue[string](Options{Pool: pool}, s.take)
	if err := q.Admit(context.Background(), item("a", 0)); err != nil || s.inFlight != 1 || q.Len() != 0 {
		t.Fatalf("admit: %v, in flight %d, len %d", err, s.inFlight, q.Len())
	}
}

func TestAdmitWaitsForNotify(t *testing.T) {
	pool := uniquePool("t-notify")
	s := &slots{}
	q := NewQueue[string](Options{Pool: pool}, s.take)
	out := make(chan result, 1)
	admitAsync(t, context.Background(), q, item("a", 0), out)
	q.Notify() // nothing freed yet
	noResult(t, out)
	s.put(1)
	q.Notify()
	if r := recv(t, out); r.err != nil || q.Len() != 0 {
		t.Fatalf("admit after notify: %v, len %d", r.err, q.Len())
	}
	if got := gauge(t, telemetry.QueuePendingRequests, pool); got != 0 {
		t.Fatalf("pending gauge %v after dispatch", got)
	}
	if got := counter(t, telemetry.QueueDispatchedTotal, pool); got != 1 {
		t.Fatalf("dispatched counter %v, want 1", got)
	}
}

// TestPassesAreTimed: every release pass is observed in
// kvpick_router_queue_pass_seconds under the queue's pool, an empty one too.
func TestPassesAreTimed(t *testing.T) {
	pool := uniquePool("t-pass-timed")
	q := NewQueue[string](Options{Pool: pool}, (&slots{}).take)
	for i := 1; i <= 3; i++ {
		q.ReleaseNow()
		if got := timedPasses(t, pool); got != uint64(i) {
			t.Fatalf("after %d passes %d were timed", i, got)
		}
	}
}

// timedPasses is the number of release passes kvpick_router_queue_pass_seconds
// has timed for pool.
func timedPasses(t *testing.T, pool string) uint64 {
	t.Helper()
	var m dto.Metric
	if err := telemetry.QueuePassSeconds.WithLabelValues(pool).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func TestQueueOrderAndNoHeadOfLine(t *testing.T) {
	pool := uniquePool("t-order")
	s := &slots{}
	q := NewQueue[string](Options{Pool: pool}, s.take)
	out := make(chan result, 8)
	for _, it := range []*Item[string]{item("low", 0), item("high1", 5), item("mid", 2), item("high2", 5)} {
		admitAsync(t, context.Background(), q, it, out)
	}
	if got := gauge(t, telemetry.QueuePendingRequests, pool); got != 4 {
		t.Fatalf("pending gauge %v, want 4", got)
	}
	var order []string
	for range 4 {
		s.put(1)
		q.Notify()
		order = append(order, recv(t, out).name)
	}
	if got := names2(order); got != "high1,high2,mid,low" {
		t.Fatalf("dispatch order %s", got)
	}

	// "blocked" (higher priority) cannot go anywhere; "free" can: free goes.
	s.allow = func(it *Item[string]) bool { return it.Value != "blocked" }
	admitAsync(t, context.Background(), q, item("blocked", 9), out)
	s.put(1)
	if err := q.Admit(context.Background(), item("free", 0)); err != nil {
		t.Fatalf("free item behind a blocked one: %v", err)
	}
	noResult(t, out)
	q.Close()
	checkAPIErr(t, recv(t, out).err, http.StatusServiceUnavailable, apierr.TypeUnavailable, "shutting down")
}

func names2(s []string) string {
	items := make([]*Item[string], len(s))
	for i, n := range s {
		items[i] = &Item[string]{Value: n}
	}
	return names(items)
}

func TestQueueFullAndShed(t *testing.T) {
	pool := uniquePool("t-full")
	q := NewQueue[string](Options{Pool: pool, MaxLength: 2}, func(*Item[string]) bool { return false })
	out := make(chan result, 4)
	admitAsync(t, context.Background(), q, item("normal", 0), out)
	admitAsync(t, context.Background(), q, item("sheddable", -1), out)

	err := q.Admit(context.Background(), item("late", -1)) // not above the sheddable one
	checkAPIErr(t, err, http.StatusTooManyRequests, apierr.TypeQueueFull, "admission queue is full (2 requests)")

	go func() { out <- result{"important", q.Admit(context.Background(), item("important", 3))} }()
	r := recv(t, out)
	if r.name != "sheddable" {
		t.Fatalf("%s returned (%v), want the sheddable one shed", r.name, r.err)
	}
	checkAPIErr(t, r.err, http.StatusTooManyRequests, apierr.TypeShed, "(2 requests)")
	for reason, want := range map[string]float64{"queue_full": 1, "request_shed": 1, "queue_timeout": 0} {
		if got := counter(t, telemetry.QueueRejectionsTotal, pool, reason); got != want {
			t.Errorf("rejections{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	if q.Len() != 2 {
		t.Fatalf("len %d after shedding, want 2", q.Len())
	}
	q.Close()
	recv(t, out)
	recv(t, out)
}

func TestQueueTimeout(t *testing.T) {
	pool := uniquePool("t-timeout")
	q := NewQueue[string](Options{Pool: pool, MaxWait: 30 * time.Millisecond}, func(*Item[string]) bool { return false })
	start := time.Now()
	err := q.Admit(context.Background(), &Item[string]{Value: "a", ISLTokens: 100})
	checkAPIErr(t, err, http.StatusTooManyRequests, apierr.TypeQueueTimeout, "30ms")
	if waited := time.Since(start); waited < 30*time.Millisecond || q.Len() != 0 {
		t.Fatalf("returned after %v with len %d", waited, q.Len())
	}
	if got := gauge(t, telemetry.QueuePendingISLTokens, pool); got != 0 {
		t.Fatalf("token gauge %v after timeout", got)
	}
}

func TestAdmitCancel(t *testing.T) {
	pool := uniquePool("t-cancel")
	q := NewQueue[string](Options{Pool: pool}, func(*Item[string]) bool { return false })
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan result, 1)
	admitAsync(t, ctx, q, item("a", 0), out)
	cancel()
	r := recv(t, out)
	if !errors.Is(r.err, context.Canceled) || q.Len() != 0 {
		t.Fatalf("cancel: %v, len %d", r.err, q.Len())
	}
	if err := q.Admit(ctx, item("b", 0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("admit with a dead ctx: %v", err)
	}
}

func TestClose(t *testing.T) {
	pool := uniquePool("t-close")
	q := NewQueue[string](Options{Pool: pool}, func(*Item[string]) bool { return false })
	out := make(chan result, 3)
	for _, n := range []string{"a", "b", "c"} {
		admitAsync(t, context.Background(), q, item(n, 0), out)
	}
	q.Close()
	for range 3 {
		checkAPIErr(t, recv(t, out).err, http.StatusServiceUnavailable, apierr.TypeUnavailable, "shutting down")
	}
	checkAPIErr(t, q.Admit(context.Background(), item("d", 0)), http.StatusServiceUnavailable, apierr.TypeUnavailable, "")
	q.Close() // idempotent
	if q.Len() != 0 {
		t.Fatalf("len %d after close", q.Len())
	}
}

// TestConcurrentCapacity: many goroutines, a predicate that reserves slots,
// workers that free them and notify. Never more in flight than capacity, and
// everyone is eventually dispatched.
func TestConcurrentCapacity(t *testing.T) {
	pool := uniquePool("t-race")
	const capacity, clients = 4, 200
	s := &slots{free: capacity}
	q := NewQueue[string](Options{Pool: pool}, s.take)
	var wg sync.WaitGroup
	var failed atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.Admit(ctx, &Item[string]{Priority: i % 3, ISLTokens: i}); err != nil {
				failed.Add(1)
				return
			}
			time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
			s.put(1)
			q.Notify()
		}()
	}
	// Extra notifiers hammer the coalescing path.
	for range 4 {
		wg.Go(func() {
			for range 200 {
				q.Notify()
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 || s.maxSeen > capacity || s.inFlight != 0 || q.Len() != 0 || q.PendingTokens() != 0 {
		t.Fatalf("failed %d, max in flight %d (capacity %d), in flight %d, len %d",
			failed.Load(), s.maxSeen, capacity, s.inFlight, q.Len())
	}
}

func gauge(t *testing.T, v *prometheus.GaugeVec, pool string) float64 {
	t.Helper()
	var m dto.Metric
	if err := v.WithLabelValues(pool).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestCancelRacesDispatch: when cancel and dispatch race, Admit returns nil
// exactly when the predicate reserved a slot for the item.
func TestCancelRacesDispatch(t *testing.T) {
	pool := uniquePool("t-cancel-race")
	for i := range 200 {
		s := &slots{}
		q := NewQueue[string](Options{Pool: pool}, s.take)
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan result, 1)
		admitAsync(t, ctx, q, item("a", 0), out)
		s.put(1)
		go q.Notify()
		if i%2 == 0 {
			time.Sleep(time.Duration(i%7) * time.Microsecond)
		}
		cancel()
		r := recv(t, out)
		s.mu.Lock()
		reserved := s.inFlight == 1
		s.mu.Unlock()
		if (r.err == nil) != reserved || (r.err != nil && !errors.Is(r.err, context.Canceled)) {
			t.Fatalf("iteration %d: err %v but reserved %v", i, r.err, reserved)
		}
		if q.Len() != 0 {
			t.Fatalf("iteration %d: len %d", i, q.Len())
		}
	}
}

func TestAdmitMisuse(t *testing.T) {
	pool := uniquePool("t-misuse")
	q := NewQueue[string](Options{Pool: pool}, func(*Item[string]) bool { return false })
	if err := q.Admit(context.Background(), nil); !errors.Is(err, ErrNilItem) {
		t.Fatalf("nil item: %v", err)
	}
	it := item("a", 0)
	out := make(chan result, 1)
	admitAsync(t, context.Background(), q, it, out)
	if err := q.Admit(context.Background(), it); !errors.Is(err, ErrAlreadyQueued) {
		t.Fatalf("same item twice: %v", err)
	}
	q.Close() // the first Admit must still be answered
	checkAPIErr(t, recv(t, out).err, http.StatusServiceUnavailable, apierr.TypeUnavailable, "")
}

func counter(t *testing.T, v *prometheus.CounterVec, labels ...string) float64 {
	t.Helper()
	var m dto.Metric
	if err := v.WithLabelValues(labels...).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

var poolSeq atomic.Int64

// uniquePool names a metrics pool for one test run, so counters read by a
// test start at zero even with -count > 1.
func uniquePool(name string) string { return fmt.Sprintf("%s-%d", name, poolSeq.Add(1)) }

// Notify returns before the pass it asks for has run: the pass runs on the
// queue's goroutine, not on the response or peer stream that freed capacity.
func TestNotifyReturnsBeforeThePass(t *testing.T) {
	var blocking atomic.Bool
	inPass, unblock := make(chan struct{}, 1), make(chan struct{})
	q := NewQueue[string](Options{Pool: uniquePool("t-async")}, func(it *Item[string]) bool {
		if !blocking.Load() {
			return false
		}
		select {
		case inPass <- struct{}{}:
		default:
		}
		<-unblock
		return true
	})
	out := make(chan result, 1)
	admitAsync(t, context.Background(), q, item("a", 0), out)
	blocking.Store(true)
	returned := make(chan struct{})
	go func() { q.Notify(); close(returned) }()
	select {
	case <-inPass:
	case <-time.After(5 * time.Second):
		t.Fatal("no release pass ran after Notify")
	}
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Notify waited for the release pass")
	}
	close(unblock)
	if r := recv(t, out); r.err != nil {
		t.Fatalf("admit after the pass: %v", r.err)
	}
}

// An arrival brings a pass over the whole queue, not over itself alone:
// requests that could not go before may go now for reasons no notification
// announced (for the router, a prefix the index has learned since), and
// they go first, in their order.
func TestArrivalAsksTheWholeQueue(t *testing.T) {
	var mu sync.Mutex
	open, passed := false, []string{}
	q := NewQueue[string](Options{Pool: uniquePool("t-arrival")}, func(it *Item[string]) bool {
		mu.Lock()
		defer mu.Unlock()
		if open && it.Queued() {
			passed = append(passed, it.Value)
			return true
		}
		return false
	})
	out := make(chan result, 3)
	for _, n := range []string{"a", "b"} {
		admitAsync(t, context.Background(), q, item(n, 0), out)
	}
	mu.Lock()
	open = true // no Notify: nothing freed, yet both may go now
	mu.Unlock()
	go func() { out <- result{"c", q.Admit(context.Background(), item("c", 0))} }()
	for range 3 {
		if r := recv(t, out); r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(passed) != "[a b c]" {
		t.Fatalf("released %v after an arrival, want [a b c]", passed)
	}
}
