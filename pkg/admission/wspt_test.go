package admission

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// work makes an item of the given prefill work.
func work(name string, prio, w int) *Item[string] {
	return &Item[string]{Priority: prio, ISLTokens: w + 6000, Work: w, Value: name}
}

// oneSlot passes the first item it is asked about in each Release: the
// order of the releases is the queue's order.
func oneSlot() func(*Item[string]) bool {
	used := false
	return func(*Item[string]) bool {
		if used {
			return false
		}
		used = true
		return true
	}
}

// drainOneByOne releases one item per call until the queue is empty.
func drainOneByOne(c *Core[string]) string {
	var out []*Item[string]
	for c.Len() > 0 {
		got := c.Release(at(100), oneSlot())
		if len(got) == 0 {
			break
		}
		out = append(out, got...)
	}
	return names(out)
}

func TestWSPTOrder(t *testing.T) {
	doc, doc2, short, mid := 12000, 11900, 200, 3000
	tests := []struct {
		name  string
		order string
		items []*Item[string]
		want  string
	}{
		{"fcfs keeps arrival order", v1.QueueFCFS,
			[]*Item[string]{work("doc", 0, doc), work("short", 0, short), work("mid", 0, mid)}, "doc,short,mid"},
		{"wspt: least work first", v1.QueueWSPT,
			[]*Item[string]{work("doc", 0, doc), work("short", 0, short), work("mid", 0, mid)}, "short,mid,doc"},
		{"wspt: one size class stays in arrival order", v1.QueueWSPT,
			[]*Item[string]{work("doc", 0, doc), work("doc2", 0, doc2), work("short", 0, short)}, "short,doc,doc2"},
		{"wspt: priority still first", v1.QueueWSPT,
			[]*Item[string]{work("short", 0, short), work("vip-doc", 1, doc)}, "vip-doc,short"},
		{"wspt: unset work counts the prompt", v1.QueueWSPT,
			[]*Item[string]{{ISLTokens: 9000, Value: "long"}, {ISLTokens: 100, Value: "tiny"}}, "tiny,long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[string](Options{Order: tt.order, MaxWait: time.Minute})
			pushAll(t, c, tt.items...)
			if got := drainOneByOne(c); got != tt.want {
				t.Errorf("released %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWSPTExpiryStaysFIFO: reordering releases never reorders expiry, which
// walks each level from its oldest item.
func TestWSPTExpiryStaysFIFO(t *testing.T) {
	c := NewCore[string](Options{Order: v1.QueueWSPT, MaxWait: 10 * time.Millisecond})
	pushAll(t, c, work("doc", 0, 12000), work("short", 0, 200))
	if got := names(c.Expire(at(10))); got != "doc" {
		t.Fatalf("expired %q at 10ms, want the oldest (doc)", got)
	}
	if c.Len() != 1 {
		t.Fatalf("%d left, want 1", c.Len())
	}
}

func TestWorkClass(t *testing.T) {
	if workClass(11900) != workClass(12000) {
		t.Error("12,000 and 11,900 tokens should be one class")
	}
	if workClass(200) >= workClass(3000) || workClass(3000) >= workClass(12000) {
		t.Error("classes should grow with work")
	}
	if workClass(0) != workClass(1) || workClass(-5) != workClass(1) {
		t.Error("work below 1 should count as 1")
	}
}

// SetWork's function runs only for an item that must wait (a request
// dispatched at once never pays for it), and its result orders the queue.
func TestQueueSetWorkOnlyForWaitingItems(t *testing.T) {
	s := &slots{free: 1}
	q := NewQueue[string](Options{Pool: uniquePool("t-setwork"), Order: v1.QueueWSPT}, s.take)
	var mu sync.Mutex
	var asked []string
	workOf := map[string]int{"long": 12000, "short": 200}
	q.SetWork(func(v string) int {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, v)
		return workOf[v]
	})
	if err := q.Admit(context.Background(), item("first", 0)); err != nil {
		t.Fatal(err)
	}
	out := make(chan result, 2)
	admitAsync(t, context.Background(), q, item("long", 0), out)
	admitAsync(t, context.Background(), q, item("short", 0), out)
	mu.Lock()
	if got := strings.Join(asked, ","); got != "long,short" {
		t.Fatalf("work asked for %q, want the two waiting items only", got)
	}
	mu.Unlock()
	s.put(1)
	q.Notify()
	if r := recv(t, out); r.name != "short" {
		t.Fatalf("%s went first, want short (least work)", r.name)
	}
	s.put(1)
	q.Notify()
	recv(t, out)
}
