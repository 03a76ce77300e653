package kvevents

import (
	"context"
	"testing"
	"time"
)

func TestManagerSync(t *testing.T) {
	a := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	b := newTestPublisher(t, PublisherOptions{ReplayEndpoint: "tcp://127.0.0.1:0"})
	rec := &recorder{}
	m := NewManager(rec, testLog(t))
	defer m.Close()
	optA := SubscriberOptions{Endpoint: a.Endpoint(), ReplayEndpoint: a.ReplayEndpoint(), EndpointKey: "a"}
	optB := SubscriberOptions{Endpoint: b.Endpoint(), ReplayEndpoint: b.ReplayEndpoint(), EndpointKey: "b"}
	ctx := context.Background()

	m.Sync(ctx, []SubscriberOptions{optA, optB, optA})
	if n := len(m.Stats()); n != 2 {
		t.Fatalf("%d subscribers running, want 2", n)
	}
	publishUntil(t, a, "a delivered", func(uint64) bool { return m.Stats()[optA].HaveSeq })
	publishUntil(t, b, "b delivered", func(uint64) bool { return m.Stats()[optB].HaveSeq })
	if keys := rec.keys(); !keys["a"] || !keys["b"] {
		t.Fatalf("handler saw keys %v", keys)
	}

	m.Sync(ctx, []SubscriberOptions{optB})
	st := m.Stats()
	if _, ok := st[optA]; ok || len(st) != 1 {
		t.Fatalf("after removing a: %v", st)
	}
	before := len(rec.real())
	if _, err := a.Publish(Batch{TS: 5}); err != nil {
		t.Fatal(err)
	}
	// Sync waited for a's subscriber to end, so nothing of a may arrive; b's
	// later batches arriving is the barrier that the check is not too early.
	fromB := rec.count("b")
	publishUntil(t, b, "b delivering after a was removed", func(uint64) bool { return rec.count("b") > fromB })
	if len(rec.real()) != before || rec.countTS("a", 5) != 0 {
		t.Fatal("removed subscriber still delivering")
	}
	m.Close()
	if n := len(m.Stats()); n != 0 {
		t.Fatalf("%d subscribers after Close", n)
	}
}

func TestSubscriberRunRejectsBadOptions(t *testing.T) {
	if err := NewSubscriber(SubscriberOptions{}, &recorder{}, testLog(t)).Run(context.Background()); err == nil {
		t.Fatal("Run without endpoint succeeded")
	}
}

func TestSubscriberBackoffUntilCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	s := NewSubscriber(SubscriberOptions{Endpoint: "tcp://127.0.0.1:1"}, &recorder{}, testLog(t))
	if err := s.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s.Stats().Connected {
		t.Fatal("connected to a closed port")
	}
}
