package peer

import (
	"reflect"
	"testing"

	"github.com/kvpick/kvpick/pkg/replicasync"
)

// FuzzDecodeBatch: any input decodes or is refused without panicking, and
// what decodes survives a re-encoding unchanged (varints may arrive in a
// longer form than the encoder writes, so the bytes themselves may differ).
func FuzzDecodeBatch(f *testing.F) {
	f.Add(appendBatch(nil, &batch{}))
	f.Add(appendBatch(nil, &batch{Flags: flagSnapshot, Events: []replicasync.Event{added("a", 1, 2, 3, 4)}}))
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(appendBatch(nil, &batch{Events: []replicasync.Event{{Origin: "a", Seq: 1, Kind: replicasync.KindWaiting, Request: 2,
		Model: "m", Priority: -1, Class: 20}, {Origin: "a", Seq: 2, Kind: replicasync.KindLeft, Request: 2}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeBatch(data)
		if err != nil {
			return
		}
		again, err := decodeBatch(appendBatch(nil, b))
		if err != nil {
			t.Fatalf("re-encoded batch refused: %v", err)
		}
		if !reflect.DeepEqual(again, b) {
			t.Fatalf("re-encoding changed the batch:\n in %+v\nout %+v", b, again)
		}
	})
}
