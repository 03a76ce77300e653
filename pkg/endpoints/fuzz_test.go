package endpoints

import (
	"os"
	"testing"
)

// FuzzParseFile: any bytes give endpoints that pass validation or an error;
// never a panic, never an invalid endpoint accepted.
func FuzzParseFile(f *testing.F) {
	if b, err := os.ReadFile("../../config/samples/endpoints.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("endpoints:\n- {address: 10.0.0.1, port: 8000}\n"))
	f.Add([]byte("endpoints:\n- {address: '::1', port: 65535, capacity: {totalBlocks: -1}}\n"))
	f.Add([]byte("endpoints: [{address: 1.2.3.4, port: 1}, {address: 1.2.3.4, port: 1}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		eps, err := ParseFile(data)
		if err != nil {
			return
		}
		s := NewSet()
		if err := s.Replace(eps); err != nil {
			t.Fatalf("validated endpoints rejected by the set: %v", err)
		}
		for i := range eps {
			if eps[i].validate() != nil {
				t.Fatalf("invalid endpoint accepted: %+v", eps[i])
			}
		}
	})
}
