package kvevents

import "testing"

// benchBatch is a typical step: one 16-block prefill store of 16-token blocks
// and one small eviction.
func benchBatch() Batch {
	hashes := make([]uint64, 16)
	tokens := make([]uint32, 16*16)
	for i := range hashes {
		hashes[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	for i := range tokens {
		tokens[i] = uint32(i * 31)
	}
	return Batch{TS: 1.7e9, Events: []Event{
		BlockStored{BlockHashes: hashes, Parent: ptr(uint64(1)), TokenIDs: tokens, BlockSize: 16, Medium: "GPU"},
		BlockRemoved{BlockHashes: hashes[:4], Medium: "GPU"},
	}}
}

func BenchmarkDecode(b *testing.B) {
	for _, enc := range []Encoding{EncodingArray, EncodingMap} {
		p, err := Encode(benchBatch(), enc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				if _, err := Decode(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	batch := benchBatch()
	for _, enc := range []Encoding{EncodingArray, EncodingMap} {
		b.Run(enc.String(), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Encode(batch, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
