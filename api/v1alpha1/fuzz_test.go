package v1alpha1

import (
	"os"
	"testing"
)

// FuzzParseConfig: any bytes give a config or an error; a config that
// validates after defaults must build every derived value without panicking.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("../../config/samples/kvpick.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("router:\n  mode: custom\n  profile:\n    scorers: [{name: kv-overlap, weight: 1}]\n    picker: softmax\n"))
	f.Add([]byte("admission:\n  queueThreshold: 0.8\nkv:\n  predictedTTL: 1h\n"))
	f.Add([]byte("admission:\n  affinityThreshold: 0.5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		c.SetDefaults()
		if c.Validate() != nil {
			return
		}
		if c.Router.Fallbacks == nil || c.Router.KVCost.OverlapWeight == nil || c.KV.BlockSize < 1 {
			t.Fatalf("valid config missing defaults: %+v", c.Router)
		}
	})
}
