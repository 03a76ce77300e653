package workload

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func FuzzParseMooncake(f *testing.F) {
	f.Add([]byte(miniTrace))
	var gz bytes.Buffer // the gzip path (a compressed trace)
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(miniTrace))
	zw.Close()
	f.Add(gz.Bytes())
	f.Add([]byte(`{"timestamp": 1e300, "input_length": 5, "output_length": 1, "hash_ids": [1]}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 99999999, "output_length": 1, "hash_ids": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseMooncake(bytes.NewReader(data), TraceOptions{RateScale: 3, Repeat: 2})
		if err != nil {
			return
		}
		x := NewExpander()
		for i := range w.Requests {
			r := &w.Requests[i]
			if r.InputLen() <= 0 || r.Output <= 0 || (i > 0 && r.Arrival < w.Requests[i-1].Arrival) {
				t.Fatalf("bad request %+v", r)
			}
			if i < 4 && r.InputLen() < 1<<16 {
				if n := len(x.Tokens(r)); n != r.InputLen() {
					t.Fatalf("expanded %d tokens, want %d", n, r.InputLen())
				}
			}
		}
	})
}
