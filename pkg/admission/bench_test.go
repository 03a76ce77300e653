package admission

import (
	"context"
	"testing"
)

func BenchmarkAdmitFastPath(b *testing.B) {
	q := NewQueue[string](Options{Pool: "bench"}, func(*Item[string]) bool { return true })
	ctx := context.Background()
	it := &Item[string]{ISLTokens: 1000}
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Admit(ctx, it); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdmitFastPathParallel(b *testing.B) {
	q := NewQueue[string](Options{Pool: "bench"}, func(*Item[string]) bool { return true })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		it := &Item[string]{ISLTokens: 1000}
		for pb.Next() {
			if err := q.Admit(ctx, it); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchItems(n int) []*Item[string] {
	items := make([]*Item[string], n)
	for i := range items {
		items[i] = &Item[string]{Priority: i%4 - 1, ISLTokens: 100}
	}
	return items
}

// BenchmarkCorePushRelease1000 queues 1,000 items over 4 priorities and
// releases them all in one call.
func BenchmarkCorePushRelease1000(b *testing.B) {
	items := benchItems(1000)
	c := NewCore[string](Options{})
	b.ReportAllocs()
	for b.Loop() {
		for _, it := range items {
			if _, err := c.Push(it, t0); err != nil {
				b.Fatal(err)
			}
		}
		if got := c.Release(t0, all); len(got) != len(items) {
			b.Fatalf("released %d", len(got))
		}
	}
}

// BenchmarkCoreReleaseBlocked1000 is a Notify that frees nothing with 1,000
// queued: the common case under overload (one predicate call per item).
func BenchmarkCoreReleaseBlocked1000(b *testing.B) {
	c := NewCore[string](Options{})
	for _, it := range benchItems(1000) {
		if _, err := c.Push(it, t0); err != nil {
			b.Fatal(err)
		}
	}
	none := func(*Item[string]) bool { return false }
	b.ReportAllocs()
	for b.Loop() {
		if c.Release(t0, none) != nil {
			b.Fatal("released")
		}
	}
}

func BenchmarkNotifyEmpty(b *testing.B) {
	q := NewQueue[string](Options{Pool: "bench"}, func(*Item[string]) bool { return true })
	b.ReportAllocs()
	for b.Loop() {
		q.Notify()
	}
}
