package peer

import "testing"

// benchBatch is 64 added events of an 8,000-token prompt (500 blocks of 16,
// predicted chain every 4th block): a busy replica's batch.
func benchBatch() *batch {
	chain := make([]uint64, 500)
	for i := range chain {
		chain[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	b := &batch{}
	for i := range 64 {
		e := added("replica-0", uint64(i+1), uint64(i+1), chain...)
		e.IndexChain = chain[:125]
		b.Events = append(b.Events, e)
	}
	return b
}

func BenchmarkEncodeBatch(b *testing.B) {
	bt := benchBatch()
	buf := appendBatch(nil, bt)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendBatch(buf[:0], bt)
	}
	b.ReportMetric(float64(len(buf))/float64(len(bt.Events)), "bytes/event")
}

func BenchmarkDecodeBatch(b *testing.B) {
	buf := appendBatch(nil, benchBatch())
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeBatch(buf); err != nil {
			b.Fatal(err)
		}
	}
}
