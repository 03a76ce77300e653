package kvevents

import (
	"encoding/hex"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func ptr[T any](v T) *T { return &v }

func roundTripBatches() map[string]Batch {
	return map[string]Batch{
		"empty":        {TS: 1},
		"dp rank":      {TS: 1.25, DPRank: ptr(3), Events: []Event{AllBlocksCleared{}}},
		"stored full":  {TS: 2, Events: []Event{BlockStored{BlockHashes: []uint64{1, 1 << 63, ^uint64(0)}, Parent: ptr(uint64(42)), TokenIDs: []uint32{1, 2, 3, 4, 5, 6}, BlockSize: 2, LoRAID: ptr(7), Medium: "GPU", LoRAName: "sql-lora"}}},
		"nil parent":   {TS: 3, Events: []Event{BlockStored{BlockHashes: []uint64{9}, TokenIDs: []uint32{1 << 31, 0}, BlockSize: 2}}},
		"removed mix":  {TS: 4, Events: []Event{BlockRemoved{BlockHashes: []uint64{5, 6}, Medium: "CPU"}, BlockRemoved{}, AllBlocksCleared{}}},
		"lora no name": {TS: 5, Events: []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{7}, BlockSize: 1, LoRAID: ptr(0)}}},
		"salted":       {TS: 6, Events: []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{7}, BlockSize: 1, Medium: "GPU", CacheSalt: "s"}}},
		"groups":       {TS: 7, Events: []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{7}, BlockSize: 1, GroupIdx: 1, SpecKind: "mamba"}, BlockRemoved{BlockHashes: []uint64{1}, GroupIdx: 1}}},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for name, b := range roundTripBatches() {
		for _, enc := range []Encoding{EncodingArray, EncodingMap, EncodingMixed} {
			t.Run(name+"/"+enc.String(), func(t *testing.T) {
				p, err := Encode(b, enc)
				if err != nil {
					t.Fatalf("Encode: %v", err)
				}
				got, err := Decode(p)
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if !reflect.DeepEqual(got, b) {
					t.Fatalf("round trip\n got %#v\nwant %#v", got, b)
				}
			})
		}
	}
}

func TestEncodePointerEvents(t *testing.T) {
	b := Batch{TS: 1, Events: []Event{&BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{1}, BlockSize: 1}, &BlockRemoved{}, &AllBlocksCleared{}}}
	p, err := Encode(b, EncodingMap)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{BlockStored{BlockHashes: []uint64{1}, TokenIDs: []uint32{1}, BlockSize: 1}, BlockRemoved{}, AllBlocksCleared{}}
	if !reflect.DeepEqual(got.Events, want) {
		t.Fatalf("got %#v", got.Events)
	}
	if _, err := Encode(Batch{Events: []Event{nil}}, EncodingArray); err == nil {
		t.Fatal("nil event encoded without error")
	}
	if _, err := Encode(Batch{}, Encoding(9)); err == nil {
		t.Fatal("unknown encoding accepted")
	}
}

// TestEncodeLayout pins the exact bytes of both encodings.
func TestEncodeLayout(t *testing.T) {
	b := Batch{TS: 1, Events: []Event{BlockRemoved{BlockHashes: []uint64{5}, Medium: "GPU"}}}
	cases := map[Encoding]string{
		// [1.0, [["BlockRemoved", [5], "GPU"]]]
		EncodingArray: "92cb3ff000000000000091" + "93ac" + hex.EncodeToString([]byte("BlockRemoved")) + "9105a3475055",
		// {"ts": 1.0, "events": [{"type": "BlockRemoved", "block_hashes": [5], "medium": "GPU"}]}
		EncodingMap: "82a27473cb3ff0000000000000a66576656e747391" + "83a474797065ac" + hex.EncodeToString([]byte("BlockRemoved")) +
			"ac" + hex.EncodeToString([]byte("block_hashes")) + "9105a66d656469756da3475055",
	}
	for enc, want := range cases {
		p, err := Encode(b, enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(p); got != want {
			t.Errorf("%v:\n got %s\nwant %s", enc, got, want)
		}
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	p, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecodeHandBuilt(t *testing.T) {
	sha := make([]byte, 32)
	for i := range sha {
		sha[i] = byte(i)
	}
	storedTail := BlockStored{BlockHashes: []uint64{^uint64(0), 0x18191a1b1c1d1e1f}, TokenIDs: []uint32{1, 2, 3, 4}, BlockSize: 2}
	cases := []struct {
		name string
		in   any
		want Batch
	}{
		{"positional, missing trailing fields, negative and bytes hashes",
			[]any{1.5, []any{[]any{"BlockStored", []any{int64(-1), sha}, nil, []any{1, 2, 3, 4}, 2}}},
			Batch{TS: 1.5, Events: []Event{storedTail}}},
		{"positional with every field plus future ones",
			[]any{int64(7), []any{[]any{"BlockStored", []any{uint64(3)}, []byte{1, 2}, []any{9}, 1, 4, "CPU", "ad", nil, 0, "full", nil}}, 2, "extra"},
			Batch{TS: 7, DPRank: ptr(2), Events: []Event{BlockStored{BlockHashes: []uint64{3}, Parent: ptr(uint64(0x0102)), TokenIDs: []uint32{9}, BlockSize: 1, LoRAID: ptr(4), Medium: "CPU", LoRAName: "ad", SpecKind: "full"}}}},
		{"map events in a positional batch, type not first, unknown keys",
			[]any{0.5, []any{map[string]any{"block_hashes": []any{int8(-2)}, "type": "BlockRemoved", "group_idx": 1}}, nil},
			Batch{TS: 0.5, Events: []Event{BlockRemoved{BlockHashes: []uint64{^uint64(1)}, GroupIdx: 1}}}},
		{"positional events in a map batch",
			map[string]any{"events": []any{[]any{"AllBlocksCleared"}, []any{"BlockRemoved", []any{1}}}, "ts": 2.0, "data_parallel_rank": 1, "x": []any{map[string]any{}}},
			Batch{TS: 2, DPRank: ptr(1), Events: []Event{AllBlocksCleared{}, BlockRemoved{BlockHashes: []uint64{1}}}}},
		{"unknown tags skipped and counted",
			[]any{1.0, []any{[]any{"Future", 1, []any{2}}, map[string]any{"type": "Later", "block_hashes": "not a list"}, []any{"AllBlocksCleared"}}},
			Batch{TS: 1, Skipped: 2, Events: []Event{AllBlocksCleared{}}}},
		{"nil events", []any{1.0, nil}, Batch{TS: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(mustMarshal(t, tc.in))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestDecodeLiteralPayload decodes bytes written by hand, not by any encoder.
func TestDecodeLiteralPayload(t *testing.T) {
	// [1.0, [["BlockStored", [0xcf ffffffffffffffff], nil, [1, 2], 2, nil, "GPU"]], 0]
	p, _ := hex.DecodeString("93cb3ff0000000000000" + "91" + "97ab" + hex.EncodeToString([]byte("BlockStored")) +
		"91cfffffffffffffffff" + "c0" + "920102" + "02" + "c0" + "a3475055" + "00")
	got, err := Decode(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Batch{TS: 1, DPRank: ptr(0), Events: []Event{BlockStored{BlockHashes: []uint64{^uint64(0)}, TokenIDs: []uint32{1, 2}, BlockSize: 2, Medium: "GPU"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got %#v\nwant %#v", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, hex, want string
	}{
		{"empty", "", "truncated"},
		{"reserved code", "c1", "want array or map"},
		{"string batch", "a161", "want array or map, got string"},
		{"short batch", "9101", "at least ts and events"},
		{"ts not number", "92a16190", "ts: want number"},
		{"hostile array32", "9201ddffffffff", "exceeds"},
		{"hostile str32", "9201" + "91" + "91dbffffffff", "exceeds"},
		{"hostile map32 skip", "82a6" + hex.EncodeToString([]byte("events")) + "90a178dfffffffff", "exceeds"},
		{"truncated float", "92cb3ff0", "ts: number: unexpected EOF"},
		{"truncated string", "92019191ab426c6f", "exceeds"},
		{"trailing bytes", "92019000", "trailing"},
		{"map without events", "81a27473cb3ff0000000000000", "without \"events\""},
		{"map key not string", "810102", "key: want string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode(p)
			if err == nil {
				t.Fatalf("Decode(%s) succeeded", tc.hex)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestDecodeSkipsBadEvents: an event with a malformed field is dropped and
// counted; the events around it (here a removal) survive.
func TestDecodeSkipsBadEvents(t *testing.T) {
	removed := "92ac" + hex.EncodeToString([]byte("BlockRemoved")) + "9107" // ["BlockRemoved", [7]]
	cases := []struct{ name, bad, want string }{
		{"event scalar", "01", "events[0]: want array or map, got integer"},
		{"empty event", "90", "empty event array"},
		{"tag not string", "9105", "tag: want string"},
		{"negative token", "94ab" + hex.EncodeToString([]byte("BlockStored")) + "90c091ff", "token id -1 out of range"},
		{"bool hash", "92ac" + hex.EncodeToString([]byte("BlockRemoved")) + "91c3", "block_hashes: [0]: hash: want string or bytes, got bool"},
		{"event map without type", "80", "without \"type\""},
		{"metadata not a map", "98ab" + hex.EncodeToString([]byte("BlockStored")) + "9101c0910101c0c0" + "92c0c0", "want string or bytes, got array"},
		{"group_idx negative", "94ac" + hex.EncodeToString([]byte("BlockRemoved")) + "9101c0ff", "group_idx -1 out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := hex.DecodeString("92cb3ff000000000000092" + tc.bad + removed)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Decode(p)
			if err != nil {
				t.Fatalf("Decode failed the whole batch: %v", err)
			}
			want := []Event{BlockRemoved{BlockHashes: []uint64{7}}}
			if !reflect.DeepEqual(b.Events, want) || b.Invalid != 1 {
				t.Fatalf("events %#v invalid %d, want the removal kept and 1 invalid", b.Events, b.Invalid)
			}
			if !errors.Is(b.InvalidErr, ErrMalformed) || !strings.Contains(b.InvalidErr.Error(), tc.want) {
				t.Errorf("InvalidErr %v does not wrap ErrMalformed or mention %q", b.InvalidErr, tc.want)
			}
		})
	}
}

// TestDecodeDialects decodes each engine's BlockStored as msgpack built
// independently of Encode, field names and order as the engines write them.
func TestDecodeDialects(t *testing.T) {
	tokens := []any{1, 2, 3, 4}
	cases := []struct {
		name string
		in   any
		want BlockStored
	}{
		{"sglang positional salted: 8th element is metadata, not lora_name",
			[]any{"BlockStored", []any{5, 6}, nil, tokens, 2, nil, "GPU", map[string]any{"cache_salt": "s1"}},
			BlockStored{BlockHashes: []uint64{5, 6}, TokenIDs: []uint32{1, 2, 3, 4}, BlockSize: 2, Medium: "GPU", CacheSalt: "s1"}},
		{"sglang map era: metadata with cache_salt and session_id",
			map[string]any{"type": "BlockStored", "block_hashes": []any{5}, "parent_block_hash": nil, "token_ids": []any{1},
				"block_size": 1, "lora_id": nil, "medium": "CPU_PINNED", "metadata": map[string]any{"cache_salt": "s2", "session_id": "x"}},
			BlockStored{BlockHashes: []uint64{5}, TokenIDs: []uint32{1}, BlockSize: 1, Medium: "CPU_PINNED", CacheSalt: "s2"}},
		{"vllm today: lora_name null, group, spec kind",
			map[string]any{"type": "BlockStored", "block_hashes": []any{5}, "parent_block_hash": nil, "token_ids": []any{1},
				"block_size": 1, "lora_id": nil, "medium": "GPU", "lora_name": nil, "group_idx": 2, "kv_cache_spec_kind": "sliding_window"},
			BlockStored{BlockHashes: []uint64{5}, TokenIDs: []uint32{1}, BlockSize: 1, Medium: "GPU", GroupIdx: 2, SpecKind: "sliding_window"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Decode(mustMarshal(t, []any{1.0, []any{tc.in}}))
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Events) != 1 || !reflect.DeepEqual(b.Events[0], tc.want) {
				t.Fatalf("\n got %#v\nwant %#v", b.Events, tc.want)
			}
		})
	}
}

// TestDecodeExtraKeys: per-block keys become digests; equal keys equal
// digests, different keys different ones, None zero.
func TestDecodeExtraKeys(t *testing.T) {
	ev := func(keys any) BlockStored {
		t.Helper()
		in := map[string]any{"type": "BlockStored", "block_hashes": []any{1, 2, 3}, "parent_block_hash": nil,
			"token_ids": []any{1, 2, 3}, "block_size": 1, "lora_id": nil, "medium": nil, "lora_name": nil, "extra_keys": keys}
		b, err := Decode(mustMarshal(t, []any{1.0, []any{in}}))
		if err != nil || len(b.Events) != 1 {
			t.Fatalf("Decode: %v %#v", err, b)
		}
		return b.Events[0].(BlockStored)
	}
	a := ev([]any{[]any{"salt-a"}, nil, []any{[]any{"mmhash", 0}}}).ExtraKeys
	b := ev([]any{[]any{"salt-b"}, nil, []any{[]any{"mmhash", 0}}}).ExtraKeys
	if len(a) != 3 || a[0] == 0 || a[1] != 0 || a[2] == 0 {
		t.Fatalf("digests %x: want non-zero, zero, non-zero", a)
	}
	if a[0] == b[0] || a[2] != b[2] {
		t.Fatalf("digests %x vs %x: want different first keys, equal third", a, b)
	}
	if ks := ev(nil).ExtraKeys; ks != nil {
		t.Fatalf("extra_keys None decoded as %x", ks)
	}
}

func TestHashFromBytes(t *testing.T) {
	cases := []struct {
		in   []byte
		want uint64
	}{
		{nil, 0},
		{[]byte{1}, 1},
		{[]byte{1, 0}, 256},
		{[]byte{9, 1, 2, 3, 4, 5, 6, 7, 8}, 0x0102030405060708},
	}
	for _, tc := range cases {
		if got := hashFromBytes(tc.in); got != tc.want {
			t.Errorf("hashFromBytes(%x) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

// TestDecodeHostileLengthsAllocateLittle checks that declared lengths are not
// trusted: each payload claims gigabytes but is a few bytes long.
func TestDecodeHostileLengthsAllocateLittle(t *testing.T) {
	for _, h := range []string{"9201ddffffffff", "92019191dbffffffff", "920191dc7fff", "82a6" + hex.EncodeToString([]byte("events")) + "90a178dfffffffff",
		"9201" + "91" + "92ab" + hex.EncodeToString([]byte("BlockStored")) + "ddffffffff", "920191c9ffffffff01", "82a6" + hex.EncodeToString([]byte("events")) + "90a178c9ffffffff01"} {
		p, _ := hex.DecodeString(h)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(p)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("Decode(%s) succeeded", h)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("Decode(%s) allocated %d bytes", h, grew)
		}
	}
}
