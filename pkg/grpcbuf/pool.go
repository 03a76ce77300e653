// Package grpcbuf is a gRPC message buffer pool for the process. Install
// makes Shared gRPC's default pool: the only way to reach the proto codec,
// which marshals every sent message and materializes every received one
// through the default pool. Importing the package changes nothing; the
// kvpick binary installs it at the start of main (and the benchmarks that
// measure the decision path as kvpick runs it do so in TestMain).
package grpcbuf

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// Install makes Shared gRPC's default buffer pool for the whole process. gRPC
// requires it at initialization: call it at the start of main (or TestMain),
// before any gRPC server, client or message exists. Not safe for concurrent use.
// Gain: BenchmarkPoolGet40KB in this package (gRPC's default pool zeroes a
// 1 MB buffer for a 40 KB message) and BenchmarkDecisionStream/pool=* in
// pkg/extproc (the whole stream).
func Install() { experimental.SetDefaultBufferPool(Shared) }

// Pool is a gRPC message buffer pool (mem.BufferPool). gRPC's default pool
// zeroes every buffer it hands out and jumps from 32 KB to 1 MB buffers, so a
// 40 KB body echo cleared a megabyte per message: measurable on the decision
// path. This pool has a tier per power of two and does not zero: gRPC writes
// every byte of a buffer (frame reads, message marshalling) before reading it,
// which is why its own transport read path uses an unzeroed pool too.
// Safe for concurrent use; the zero value is ready.
type Pool struct {
	tiers [maxTier - minTier + 1]sync.Pool // tier i holds buffers of capacity exactly 1<<(i+minTier)
}

const (
	minTier = 8  // 256 B: smaller requests take a 256 B buffer
	maxTier = 26 // 64 MB: larger buffers are allocated and dropped (the body limit is 32 MiB by default)
)

var _ mem.BufferPool = (*Pool)(nil)

// Shared is the process-wide pool: pooled buffers are worth more the more they are reused.
var Shared = &Pool{}

// tierOf is the smallest tier that fits n bytes.
func tierOf(n int) int {
	if n <= 1<<minTier {
		return 0
	}
	return bits.Len(uint(n-1)) - minTier
}

// Get returns a buffer of length n (contents undefined).
func (p *Pool) Get(n int) *[]byte {
	t := tierOf(n)
	if t >= len(p.tiers) {
		b := make([]byte, n)
		return &b
	}
	if bp, ok := p.tiers[t].Get().(*[]byte); ok {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n, 1<<(t+minTier))
	return &b
}

// Put keeps a buffer whose capacity is exactly a tier's size; others (foreign or oversized) go to the GC.
func (p *Pool) Put(bp *[]byte) {
	c := cap(*bp)
	if c < 1<<minTier || c&(c-1) != 0 {
		return
	}
	if t := bits.Len(uint(c)) - 1 - minTier; t < len(p.tiers) {
		p.tiers[t].Put(bp)
	}
}
