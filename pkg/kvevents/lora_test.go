package kvevents

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// vLLM puts a LoRA request's adapter name first in every block's extra_keys
// (as it hashes the block). The decoder leaves the name out, since the
// picker seeds LoRA chains with it: keys naming only the adapter are no keys,
// and further keys (a salt) keep their identity.
func TestExtraKeysLeaveOutTheAdapter(t *testing.T) {
	cases := []struct {
		name     string
		keys     [][]any
		wantNil  bool
		wantZero []bool // per block, when not nil
	}{
		{"adapter only", [][]any{{"sql"}, {"sql"}}, true, nil},
		{"adapter and salt", [][]any{{"sql", "salt"}, {"sql"}}, false, []bool{false, true}},
		{"other adapter's name", [][]any{{"other"}, {"other"}}, false, []bool{false, false}},
	}
	for _, tc := range cases {
		ev := []any{"BlockStored", []uint64{1, 2}, nil, []uint32{1, 2, 3, 4}, 2, 1, "GPU", "sql", tc.keys}
		p, err := msgpack.Marshal([]any{1.5, []any{ev}, nil})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Decode(p)
		if err != nil || len(b.Events) != 1 {
			t.Fatalf("%s: decode %v, %d events", tc.name, err, len(b.Events))
		}
		ks := b.Events[0].(BlockStored).ExtraKeys
		if (ks == nil) != tc.wantNil {
			t.Fatalf("%s: extra keys %v, want nil %v", tc.name, ks, tc.wantNil)
		}
		for i, z := range tc.wantZero {
			if (ks[i] == 0) != z {
				t.Errorf("%s: block %d key %#x, want zero %v", tc.name, i, ks[i], z)
			}
		}
	}
	// the same salt after the adapter gives the same identity on every block
	ev := []any{"BlockStored", []uint64{1, 2}, nil, []uint32{1, 2, 3, 4}, 2, 1, "GPU", "sql", [][]any{{"sql", "s"}, {"sql", "s"}}}
	p, _ := msgpack.Marshal([]any{1.5, []any{ev}, nil})
	b, _ := Decode(p)
	if ks := b.Events[0].(BlockStored).ExtraKeys; ks[0] != ks[1] || ks[0] == 0 {
		t.Fatalf("equal keys after the adapter read as %v", ks)
	}
}

// Encode writes what vLLM writes for an adapter's store: its name in every
// block's keys.
func TestEncodeWritesTheAdapterInExtraKeys(t *testing.T) {
	for _, enc := range []Encoding{EncodingArray, EncodingMap} {
		p, err := Encode(Batch{TS: 1, Events: []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{1, 2}, BlockSize: 2, LoRAName: "sql"}}}, enc)
		if err != nil {
			t.Fatal(err)
		}
		var raw any
		if err := msgpack.Unmarshal(p, &raw); err != nil {
			t.Fatal(err)
		}
		var events any
		switch b := raw.(type) {
		case []any:
			events = b[1]
		case map[string]any:
			events = b["events"]
		}
		var keys any
		switch ev := events.([]any)[0].(type) {
		case []any:
			keys = ev[8]
		case map[string]any:
			keys = ev["extra_keys"]
		}
		k, ok := keys.([]any)
		if !ok || len(k) != 1 || k[0].([]any)[0] != "sql" {
			t.Errorf("encoding %v: extra_keys %#v, want [[\"sql\"]]", enc, keys)
		}
	}
}
