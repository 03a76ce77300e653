package admission

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/apierr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// item makes an item whose Value is its name.
func item(name string, prio int) *Item[string] {
	return &Item[string]{Priority: prio, ISLTokens: 10, Value: name}
}

func names(items []*Item[string]) string {
	s := make([]string, len(items))
	for i, it := range items {
		s[i] = it.Value
	}
	return strings.Join(s, ",")
}

func all(*Item[string]) bool { return true }

// pushAll pushes items at 1 ms intervals and fails on any error or eviction.
func pushAll(t *testing.T, c *Core[string], items ...*Item[string]) {
	t.Helper()
	for i, it := range items {
		ev, err := c.Push(it, at(i))
		if err != nil || ev != nil {
			t.Fatalf("push %v: evicted %v, err %v", it.Value, ev, err)
		}
	}
}

func TestReleaseOrder(t *testing.T) {
	tests := []struct {
		name  string
		prios []int // item i is named "i"
		allow func(*Item[string]) bool
		want  string
		left  int
	}{
		{"fifo within a priority", []int{0, 0, 0}, all, "0,1,2", 0},
		{"priority first", []int{0, 5, -1, 5, 2}, all, "1,3,4,0,2", 0},
		{"no head-of-line blocking", []int{1, 0, 0}, func(it *Item[string]) bool { return it.Value != "0" }, "1,2", 1},
		{"nothing can go", []int{0, 1}, func(*Item[string]) bool { return false }, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[string](Options{})
			for i, p := range tt.prios {
				pushAll(t, c, item(fmt.Sprint(i), p))
			}
			got := c.Release(at(100), tt.allow)
			if names(got) != tt.want || c.Len() != tt.left {
				t.Fatalf("released %q (len %d), want %q (len %d)", names(got), c.Len(), tt.want, tt.left)
			}
		})
	}
}

func TestReleaseReservation(t *testing.T) {
	c := NewCore[string](Options{})
	pushAll(t, c, item("a", 0), item("b", 0), item("c", 0))
	free := 2 // the predicate reserves a slot per item it passes
	got := c.Release(at(10), func(*Item[string]) bool {
		if free == 0 {
			return false
		}
		free--
		return true
	})
	if names(got) != "a,b" || c.Len() != 1 {
		t.Fatalf("released %q, len %d; want a,b and 1 left", names(got), c.Len())
	}
}

func TestPushFull(t *testing.T) {
	tests := []struct {
		name     string
		queued   []int
		arrival  int
		evicted  string // name of evicted item, "" for none
		wantFull bool
	}{
		{"room left", []int{0}, 0, "", false},
		{"full of normal, higher arrival", []int{0, 0, 0}, 9, "", true},
		{"full, equal arrival", []int{1, 1, 1}, 1, "", true},
		{"full, lower arrival", []int{1, 1, -1}, -2, "", true},
		{"sheds newest lowest sheddable", []int{-2, -2, -1}, 0, "1", false},
		{"sheddable arrival displaces lower sheddable", []int{-3, -1, -3}, -1, "2", false},
		{"sheddable equal to arrival is kept", []int{-1, -1, -1}, -1, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[string](Options{MaxLength: 3})
			if tt.name == "room left" {
				c = NewCore[string](Options{MaxLength: 2})
			}
			for i, p := range tt.queued {
				pushAll(t, c, item(fmt.Sprint(i), p))
			}
			before := c.Len()
			arr := item("new", tt.arrival)
			ev, err := c.Push(arr, at(50))
			if tt.wantFull {
				checkAPIErr(t, err, http.StatusTooManyRequests, apierr.TypeQueueFull, "(3 requests)")
				if c.Len() != before || arr.Queued() {
					t.Fatalf("rejected arrival changed the queue: len %d -> %d", before, c.Len())
				}
				return
			}
			if err != nil {
				t.Fatalf("push: %v", err)
			}
			if got := ""; ev != nil {
				got = ev.Value
				if got != tt.evicted || ev.Queued() {
					t.Fatalf("evicted %q (queued %v), want %q", got, ev.Queued(), tt.evicted)
				}
			} else if tt.evicted != "" {
				t.Fatalf("nothing evicted, want %q", tt.evicted)
			}
		})
	}
}

func checkAPIErr(t *testing.T, err error, status int, typ, msgPart string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not *apierr.Error", err)
	}
	if ae.Status != status || ae.Type != typ || !strings.Contains(ae.Message, msgPart) {
		t.Fatalf("got %d %s %q; want %d %s containing %q", ae.Status, ae.Type, ae.Message, status, typ, msgPart)
	}
}

func TestPushMisuse(t *testing.T) {
	c, other := NewCore[string](Options{}), NewCore[string](Options{})
	it := item("a", 0)
	if _, err := c.Push(nil, t0); !errors.Is(err, ErrNilItem) {
		t.Fatalf("nil push: %v", err)
	}
	pushAll(t, c, it)
	if _, err := c.Push(it, t0); !errors.Is(err, ErrAlreadyQueued) {
		t.Fatalf("double push: %v", err)
	}
	if _, err := other.Push(it, t0); !errors.Is(err, ErrAlreadyQueued) {
		t.Fatalf("push into a second core: %v", err)
	}
	if other.Remove(it) || other.Remove(nil) {
		t.Fatal("a core removed an item it does not hold")
	}
	if !c.Remove(it) || c.Remove(it) || c.Len() != 0 {
		t.Fatal("remove should succeed exactly once")
	}
	if _, err := other.Push(it, t0); err != nil {
		t.Fatalf("re-push after remove: %v", err)
	}
}

func TestExpire(t *testing.T) {
	c := NewCore[string](Options{MaxWait: 100 * time.Millisecond})
	if _, ok := c.NextDeadline(); ok {
		t.Fatal("empty core has a deadline")
	}
	pushAll(t, c, item("a", 0), item("b", 5), item("c", 0)) // at 0, 1, 2 ms
	if d, ok := c.NextDeadline(); !ok || !d.Equal(at(100)) {
		t.Fatalf("next deadline %v %v, want %v", d, ok, at(100))
	}
	if got := c.Expire(at(99)); got != nil {
		t.Fatalf("expired early: %q", names(got))
	}
	if got := c.Release(at(100), all); names(got) != "b,c" {
		t.Fatalf("release past a deadline dispatched %q, want b,c (a is left for Expire)", names(got))
	}
	if got := c.Expire(at(100)); names(got) != "a" || c.Len() != 0 {
		t.Fatalf("expired %q, len %d", names(got), c.Len())
	}
}

func TestPushClampsTime(t *testing.T) {
	c := NewCore[string](Options{MaxWait: time.Second})
	a, b := item("a", 0), item("b", 0)
	pushAll(t, c, a)
	if _, err := c.Push(b, at(-500)); err != nil {
		t.Fatal(err)
	}
	if !b.EnqueuedAt().Equal(a.EnqueuedAt()) || !b.Deadline().Equal(at(1000)) {
		t.Fatalf("push in the past kept time %v, deadline %v", b.EnqueuedAt(), b.Deadline())
	}
	if got := c.Expire(at(1000)); names(got) != "a,b" {
		t.Fatalf("expired %q", names(got))
	}
}

func TestPendingTokens(t *testing.T) {
	c := NewCore[string](Options{})
	a, b := &Item[string]{ISLTokens: 100, Value: "a"}, &Item[string]{ISLTokens: -5, Value: "b"}
	pushAll(t, c, a, b, &Item[string]{ISLTokens: 7, Value: "c"})
	a.ISLTokens = 1 // edits after push must not skew the sum
	if c.PendingTokens() != 107 {
		t.Fatalf("pending tokens %d, want 107", c.PendingTokens())
	}
	c.Remove(a)
	if got := c.Drain(); names(got) != "b,c" || c.PendingTokens() != 0 || c.Len() != 0 {
		t.Fatalf("drain %q left %d tokens", names(got), c.PendingTokens())
	}
}

func TestDefaults(t *testing.T) {
	o := NewCore[string](Options{MaxLength: -1}).Options()
	if d := v1.Default().Admission; o.MaxLength != d.MaxQueueLength || o.MaxWait != d.MaxQueueWait.Duration {
		t.Fatalf("defaults not applied: %+v", o)
	}
}

func TestArrive(t *testing.T) {
	c := NewCore[string](Options{MaxLength: 1})
	yes := func(*Item[string]) bool { return true }
	a, b, d := item("a", 0), item("b", 0), item("d", 0)
	if went, ev, err := c.Arrive(a, t0, yes); !went || ev != nil || err != nil || a.Queued() {
		t.Fatalf("empty queue, passing predicate: went %v ev %v err %v", went, ev, err)
	}
	if went, _, err := c.Arrive(b, t0, func(*Item[string]) bool { return false }); went || err != nil || !b.Queued() {
		t.Fatalf("blocked arrival not queued: went %v err %v", went, err)
	}
	// Something is queued: even a passing arrival queues (the caller then runs Release).
	if went, _, err := c.Arrive(d, t0, yes); went || !isFull(err) {
		t.Fatalf("arrival behind a queue: went %v err %v", went, err)
	}
	if went, _, err := c.Arrive(nil, t0, yes); went || !errors.Is(err, ErrNilItem) {
		t.Fatalf("nil arrival: went %v err %v", went, err)
	}
}
