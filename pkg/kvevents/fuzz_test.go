package kvevents

import (
	"reflect"
	"testing"
)

// FuzzDecode checks Decode never panics, and that whatever it accepts survives
// an Encode/Decode round trip in both encodings.
func FuzzDecode(f *testing.F) {
	for _, b := range roundTripBatches() {
		for _, enc := range []Encoding{EncodingArray, EncodingMap} {
			p, err := Encode(b, enc)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(p)
		}
	}
	f.Add([]byte{0x92, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := Decode(p)
		if err != nil {
			return
		}
		b.Skipped = 0
		for _, enc := range []Encoding{EncodingArray, EncodingMap} {
			q, err := Encode(b, enc)
			if err != nil {
				t.Fatalf("Encode of a decoded batch: %v", err)
			}
			again, err := Decode(q)
			if err != nil {
				t.Fatalf("re-Decode: %v", err)
			}
			if !reflect.DeepEqual(again, b) && !nanTS(b) {
				t.Fatalf("round trip changed the batch\n got %#v\nwant %#v", again, b)
			}
		}
	})
}

func nanTS(b Batch) bool { return b.TS != b.TS }
