package peer

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/replicasync"
)

func added(origin string, seq, req uint64, chain ...uint64) replicasync.Event {
	return replicasync.Event{Origin: origin, Seq: seq, Kind: replicasync.KindAdded, Request: req,
		At: time.Unix(1700000000, 123456789), Endpoint: "10.0.0.1:8000",
		Work:       activework.Work{PromptTokens: 4096, UncachedTokens: 1024, ExpectedOutput: 128, BlockSize: 16, Blocks: chain},
		IndexChain: chain}
}

func TestCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		b    batch
	}{
		{"empty heartbeat", batch{}},
		{"snapshot flag, no events", batch{Flags: flagSnapshot}},
		{"added with chains", batch{Events: []replicasync.Event{added("a", 1, 7, 1, 2, 1<<63|5)}}},
		{"every kind", batch{Flags: flagSnapshotMore, Events: []replicasync.Event{
			added("replica-x", 1, 1),
			{Origin: "replica-x", Seq: 2, Epoch: 1 << 62, Kind: replicasync.KindPrefillDone, Request: 1},
			{Origin: "replica-x", Kind: replicasync.KindPredicted, Endpoint: "e", IndexChain: []uint64{9}},
			{Origin: "replica-x", Seq: 1 << 40, Kind: replicasync.KindFreed, Request: 1<<64 - 1, At: time.Unix(0, -5)},
		}}},
		{"queue order (version 2)", batch{Events: []replicasync.Event{
			added("replica-y", 1, 1),
			{Origin: "replica-y", Seq: 2, Kind: replicasync.KindWaiting, Request: 2, At: time.Unix(1700000000, 5),
				Model: "qwen3-32b", Priority: -3, Class: 25},
			{Origin: "replica-y", Seq: 3, Kind: replicasync.KindLeft, Request: 2, At: time.Unix(1700000001, 0)},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeBatch(appendBatch(nil, &tc.b))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.b) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, tc.b)
			}
		})
	}
}

// Every malformed input is refused with a reason, never a panic or a huge allocation.
func TestDecodeRefusesMalformed(t *testing.T) {
	good := appendBatch(nil, &batch{Events: []replicasync.Event{added("a", 1, 7, 1, 2)}})
	long := appendBatch(nil, &batch{Events: []replicasync.Event{{Origin: strings.Repeat("x", maxString+1), Kind: replicasync.KindFreed}}})
	badKind := appendBatch(nil, &batch{Events: []replicasync.Event{{Origin: "a", Kind: replicasync.KindFreed}}})
	badKind[5+1+1] = 9 // version, flags, count, len("a")=1, 'a', seq=0, epoch=0 -> kind byte
	v1Waiting := appendBatch(nil, &batch{Events: []replicasync.Event{{Origin: "a", Kind: replicasync.KindFreed}}})
	v1Waiting[5+1+1] = byte(replicasync.KindWaiting) // a version 1 batch cannot carry it
	hugeClass := appendBatch(nil, &batch{Events: []replicasync.Event{{Origin: "a", Kind: replicasync.KindWaiting}}})
	hugeClass = binary.AppendVarint(hugeClass[:len(hugeClass)-1], 1<<40)
	tests := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "truncated", nil},
		{"unknown version", "wire version 7", []byte{7, 0, 0}},
		{"version 0", "wire version 0", []byte{0, 0, 0}},
		{"truncated event", "", good[:len(good)-3]},
		{"trailing bytes", "trailing", append(append([]byte{}, good...), 0)},
		{"count beyond input", "exceeds", binary.AppendUvarint([]byte{1, 0}, 1<<40)},
		{"origin too long", "origin", long},
		{"unknown kind", "kind 9", badKind},
		{"new kind in an old version", "kind 5 in a version 1 batch", v1Waiting},
		{"class out of range", "class", hugeClass},
		{"bad varint", "varint", []byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := decodeBatch(tc.data)
			if err == nil {
				t.Fatalf("accepted: %+v", b)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "peer batch") {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestCodecRefusesOtherTypes(t *testing.T) {
	if _, err := (codec{}).Marshal("x"); err == nil {
		t.Fatal("marshalled a string")
	}
	if err := (codec{}).Unmarshal([]byte{1, 0, 0}, new(int)); err == nil {
		t.Fatal("unmarshalled into an int")
	}
}

// A batch is sent as the oldest version that carries its kinds: without
// queue-order events version 1, which the releases before them read; with
// them version 2; with a refusal version 3. A decoder refuses a kind its
// batch's version cannot carry.
func TestBatchVersionFollowsKinds(t *testing.T) {
	left := replicasync.Event{Origin: "a", Seq: 2, Kind: replicasync.KindLeft, Request: 7}
	refused := replicasync.Event{Origin: "a", Seq: 3, Kind: replicasync.KindRefused, Request: 7}
	tests := []struct {
		name string
		evs  []replicasync.Event
		want byte
	}{
		{"plain", []replicasync.Event{added("a", 1, 7)}, wireVersion1},
		// The newest kind first, so a decoder claiming the previous version meets it before any field it lacks.
		{"queue order", []replicasync.Event{left, added("a", 1, 7)}, wireVersion2},
		{"refusal", []replicasync.Event{refused, left, added("a", 1, 7)}, wireVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := appendBatch(nil, &batch{Events: tt.evs})
			if b[0] != tt.want {
				t.Fatalf("sent as version %d, want %d", b[0], tt.want)
			}
			got, err := decodeBatch(b)
			if err != nil || len(got.Events) != len(tt.evs) || got.Events[0].Kind != tt.evs[0].Kind {
				t.Fatalf("decode: %v, %+v", err, got)
			}
			if tt.want == wireVersion1 {
				return
			}
			b[0]-- // the same events claimed as the version before: a kind it cannot carry
			if _, err := decodeBatch(b); err == nil || !strings.Contains(err.Error(), "unknown event kind") {
				t.Fatalf("version %d batch with a newer kind: err = %v", b[0], err)
			}
		})
	}
}
