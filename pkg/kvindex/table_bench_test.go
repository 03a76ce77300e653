package kvindex

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// heapBytes is the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTableVsMap is the open-addressing table's rent (table.go): the
// index's access pattern (lookups of block hashes, half of them absent)
// against a Go map holding the same entries, with each one's heap per entry.
func BenchmarkTableVsMap(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = r.Uint64() | 1
	}
	b.Run("impl=table", func(b *testing.B) {
		before := heapBytes()
		t := newTable[uint64](7)
		for i, k := range keys {
			v, _ := t.upsert(k)
			*v = uint64(i)
		}
		perEntry := float64(heapBytes()-before) / n
		b.ResetTimer()
		var sum uint64
		for i := 0; b.Loop(); i++ {
			k := keys[i%n] ^ uint64(i&8) // every other run of 8 lookups misses
			if v, ok := t.get(k); ok {
				sum += v
			}
		}
		sink = int(sum)
		runtime.KeepAlive(&t)
		b.ReportMetric(perEntry, "heap-B/entry")
	})
	b.Run("impl=map", func(b *testing.B) {
		before := heapBytes()
		m := make(map[uint64]uint64)
		for i, k := range keys {
			m[k] = uint64(i)
		}
		perEntry := float64(heapBytes()-before) / n
		b.ResetTimer()
		var sum uint64
		for i := 0; b.Loop(); i++ {
			k := keys[i%n] ^ uint64(i&8)
			if v, ok := m[k]; ok {
				sum += v
			}
		}
		sink = int(sum)
		runtime.KeepAlive(m)
		b.ReportMetric(perEntry, "heap-B/entry")
	})
}

var sink int
