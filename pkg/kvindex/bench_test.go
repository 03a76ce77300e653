package kvindex

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func BenchmarkBlockHashes(b *testing.B) {
	for _, bs := range []int{16, 64} {
		b.Run(fmt.Sprintf("block%d", bs), func(b *testing.B) {
			const blocks = 1000
			tokens, dst := seq(blocks*bs, 1), make([]uint64, 0, blocks)
			b.ReportAllocs()
			b.SetBytes(int64(4 * len(tokens)))
			cpu := cpuClock()
			for b.Loop() {
				dst = BlockHashes(dst[:0], 7, tokens, bs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*blocks), "ns/block")
			b.ReportMetric(float64(cpuClock()-cpu)/float64(b.N*blocks), "cpu-ns/block")
		})
	}
}

// benchChains returns n distinct 1,000-block chains sharing a 100-block prefix.
func benchChains(n int) [][]uint64 {
	prefix := chainOf(1, 100)
	out := make([][]uint64, n)
	for i := range out {
		out[i] = append(append([]uint64{}, prefix...), chainOf(uint64(i+2)<<40, 900)...)
	}
	return out
}

func BenchmarkRecordPredicted(b *testing.B) {
	for _, tc := range []struct {
		name   string
		chains int
	}{{"refresh", 1}, {"new-chains", 512}} {
		b.Run(tc.name, func(b *testing.B) {
			ix, chains := New(Options{MaxBlocksPerEndpoint: 100_000}), benchChains(tc.chains)
			eps := make([]string, 16)
			for i := range eps {
				eps[i] = fmt.Sprintf("10.0.0.%d:8000", i)
			}
			b.ReportAllocs()
			i, cpu := 0, cpuClock()
			for b.Loop() {
				ix.RecordPredicted(eps[i%len(eps)], chains[i%len(chains)], t0.Add(time.Duration(i)*time.Millisecond))
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chains/s")
			reportCPU(b, cpu, 1)
		})
	}
}

// matchFixture: 100 endpoints; endpoint k holds the first 10(k+1) blocks of
// the query chain plus 2,000 unrelated blocks, so the walk covers all 1,000
// blocks and drops one endpoint every 10 blocks.
func matchFixture() (*Index, []uint64) {
	ix, query := New(Options{}), chainOf(3, 1000)
	for k := 0; k < 100; k++ {
		ep := fmt.Sprintf("10.0.%d.%d:8000", k/250, k%250)
		ix.RecordPredicted(ep, chainOf(uint64(k+10)<<44, noiseBlocks), t0)
		ix.RecordPredicted(ep, query[:10*(k+1)], t0)
	}
	return ix, query
}

func BenchmarkMatch1000Blocks100Endpoints(b *testing.B) {
	ix, query := matchFixture()
	if got := len(ix.Match(query, t0, nil)); got != 100 {
		b.Fatalf("fixture matches %d endpoints", got)
	}
	b.Run("serial", func(b *testing.B) {
		dst := make([]Overlap, 0, 128)
		b.ReportAllocs()
		cpu := cpuClock()
		for b.Loop() {
			dst = ix.Match(query, t0, dst[:0])
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		reportCPU(b, cpu, 1)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuClock()
		b.RunParallel(func(pb *testing.PB) {
			dst := make([]Overlap, 0, 128)
			for pb.Next() {
				dst = ix.Match(query, t0, dst[:0])
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		reportCPU(b, cpu, 1)
	})
	b.Run("parallel-with-writer", func(b *testing.B) {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { // one writer refreshing the hot prefix on other endpoints
			defer close(done)
			other, writers := query[:500], []string{"w0", "w1", "w2", "w3"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					ix.RecordPredicted(writers[i%len(writers)], other, t0)
				}
			}
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			dst := make([]Overlap, 0, 128)
			for pb.Next() {
				dst = ix.Match(query, t0, dst[:0])
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		close(stop)
		<-done
	})
}

// BenchmarkBytesPerBlock stores 1e6 (block, endpoint) entries and reports the
// heap growth per entry. Run with -benchtime=1x.
func BenchmarkBytesPerBlock(b *testing.B) {
	for _, tc := range []struct {
		name     string
		observed bool
	}{{"predicted", false}, {"observed", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(bytesPerBlock(tc.observed), "bytes/block")
			}
		})
	}
}

func bytesPerBlock(observed bool) float64 {
	const eps, chains, blocks = 10, 100, 1000
	before := heapInUse()
	ix := New(Options{})
	tokens := make([]uint32, blocks*16)
	engine := make([]uint64, blocks)
	for e := 0; e < eps; e++ {
		ep := fmt.Sprintf("10.0.0.%d:8000", e)
		for c := 0; c < chains; c++ {
			if observed {
				for i := range tokens {
					tokens[i] = uint32(e*chains+c)<<16 + uint32(i)
				}
				for i := range engine {
					engine[i] = uint64(e*chains*blocks + c*blocks + i)
				}
				_ = ix.ApplyStored(ep, 1, nil, engine, tokens, 16, t0)
				continue
			}
			ix.RecordPredicted(ep, chainOf(uint64(e*chains+c+1)<<40, blocks), t0)
		}
	}
	after := heapInUse()
	if st := ix.Stats(); st.Entries != eps*chains*blocks {
		panic(fmt.Sprintf("stored %d entries", st.Entries))
	}
	runtime.KeepAlive(ix)
	return float64(after-before) / float64(eps*chains*blocks)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cpuClock reports process CPU time; on the shared benchmark machine wall
// time per op is inflated by other load, CPU time much less so.
func cpuClock() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op for a benchmark that started at cpu time start.
func reportCPU(b *testing.B, start time.Duration, perOp int) {
	b.ReportMetric(float64(cpuClock()-start)/float64(b.N*perOp), "cpu-ns/op")
}

var noiseBlocks = 2000
