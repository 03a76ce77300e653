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
	// a bad event (token -1) before a good removal: the skip-and-count path
	f.Add(append([]byte{0x92, 0x01, 0x92, 0x94, 0xab}, append([]byte("BlockStored"), 0x90, 0xc0, 0x91, 0xff, 0x92, 0xac, 'B', 'l', 'o', 'c', 'k', 'R', 'e', 'm', 'o', 'v', 'e', 'd', 0x91, 0x07)...))
	if p, err := EncodeWith(Batch{TS: 1, Events: []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{1}, BlockSize: 1,
		ExtraKeys: []uint64{9}, GroupIdx: 1, SpecKind: "full"}}}, EncodeOptions{Encoding: EncodingMixed, BytesHashes: true}); err == nil {
		f.Add(p)
	}
	// vLLM's LoRA store: the adapter first in every block's extra_keys, one block also salted
	if p, err := Encode(Batch{TS: 1, Events: []Event{BlockStored{BlockHashes: []uint64{1, 2}, TokenIDs: []uint32{1, 2}, BlockSize: 1,
		LoRAName: "sql", ExtraKeys: []uint64{0, 5}}}}, EncodingMap); err == nil {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := Decode(p)
		if err != nil {
			return
		}
		b.Skipped, b.Invalid, b.InvalidErr = 0, 0, nil
		for _, enc := range []Encoding{EncodingArray, EncodingMap, EncodingMixed} {
			for _, bytesHashes := range []bool{false, true} {
				q, err := EncodeWith(b, EncodeOptions{Encoding: enc, BytesHashes: bytesHashes})
				if err != nil {
					t.Fatalf("Encode of a decoded batch: %v", err)
				}
				again, err := Decode(q)
				if err != nil {
					t.Fatalf("re-Decode: %v", err)
				}
				if want := canon(b, enc); !reflect.DeepEqual(canon(again, enc), want) && !nanTS(b) {
					t.Fatalf("round trip changed the batch\n got %#v\nwant %#v", again, want)
				}
			}
		}
	})
}

func nanTS(b Batch) bool { return b.TS != b.TS }

// canon reduces a batch to what survives an encoding: extra keys to which
// blocks have any (a digest of a digest differs), and, positionally, a salted
// BlockStored to SGLang's form, which has no lora_name or later fields.
func canon(b Batch, enc Encoding) Batch {
	evs := make([]Event, len(b.Events))
	for i, e := range b.Events {
		if s, ok := e.(BlockStored); ok {
			if s.CacheSalt != "" && enc == EncodingArray {
				s.LoRAName, s.ExtraKeys, s.GroupIdx, s.SpecKind = "", nil, 0, ""
			}
			if len(s.ExtraKeys) == 0 {
				s.ExtraKeys = nil
			}
			ks := make([]uint64, len(s.ExtraKeys))
			for j, k := range s.ExtraKeys {
				ks[j] = min(k, 1)
			}
			if s.ExtraKeys != nil {
				s.ExtraKeys = ks
			}
			e = s
		}
		evs[i] = e
	}
	if len(evs) == 0 {
		evs = nil
	}
	b.Events = evs
	return b
}
