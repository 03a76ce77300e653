package extproc

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

var fuzzPaths = []string{"/v1/completions", "/v1/chat/completions", "/v1/models", "/nope", "", "/v1/responses?x"}

// fuzzMessages decodes a message sequence: each op byte picks a phase and flags; payloads come from the data.
func fuzzMessages(data []byte) []*extprocv3.ProcessingRequest {
	var msgs []*extprocv3.ProcessingRequest
	for len(data) > 0 && len(msgs) < 64 {
		op := data[0]
		data = data[1:]
		n := 0
		if len(data) > 0 {
			n = min(int(data[0]), len(data)-1)
			data = data[1:]
		}
		payload := data[:n]
		data = data[n:]
		msgs = append(msgs, fuzzMessage(op, payload))
	}
	return msgs
}

func fuzzMessage(op byte, payload []byte) *extprocv3.ProcessingRequest {
	eos := op&0x10 != 0
	var m *extprocv3.ProcessingRequest
	switch op % 8 {
	case 0:
		m = reqHeaders(fuzzPaths[int(op>>5)%len(fuzzPaths)], eos)
		if op&0x08 != 0 {
			m.ProtocolConfig = &extprocv3.ProtocolConfiguration{RequestBodyMode: filterv3.ProcessingMode_BodySendMode(op >> 5 % 6),
				ResponseBodyMode: filterv3.ProcessingMode_BodySendMode(op >> 6)}
		}
	case 1:
		m = reqBody(string(payload), eos)
	case 2:
		m = reqTrailers
	case 3:
		m = respHeaders(string(payload), eos)
	case 4:
		m = respBody(string(payload), eos)
	case 5:
		m = respTrailers
	case 6:
		m = &extprocv3.ProcessingRequest{}
	default:
		m = reqHeaders("/v1/completions", false)
		m.MetadataContext = fuzzMetadata(payload)
	}
	m.ObservabilityMode = op == 0xff
	return m
}

func fuzzMetadata(payload []byte) *corev3.Metadata {
	v := structpb.NewStringValue(string(payload))
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
		SubsetNamespace:   {Fields: map[string]*structpb.Value{SubsetKey: v}},
		MetadataNamespace: {Fields: map[string]*structpb.Value{MetadataKeyServed: v}},
	}}
}

func FuzzStream(f *testing.F) {
	body := completion("m", "hello")
	f.Add(append([]byte{0x00, 0x00, 0x11, byte(len(body))}, body...))
	f.Add(append(append([]byte{0x08, 0x00, 0x01, 0x05}, body[:5]...), append([]byte{0x11, byte(len(body) - 5)}, body[5:]...)...))
	f.Add([]byte{0x10, 0x00, 0x13, 0x03, '2', '0', '0', 0x14, 0x02, 'h', 'i'})
	f.Add([]byte{0x01, 0x02, '{', '}', 0x02, 0x00, 0x03, 0x03, '5', '0', '0', 0x05, 0x00})
	f.Add([]byte{0x07, 0x05, 'a', ':', '1', ',', 'b', 0x11, 0x01, '{', 0xff, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000")
		r.fallbacks = 1
		ms := newMemStream(fuzzMessages(data)...)
		ms.failAfter = int(len(data) % 7)
		_ = NewServer(r, Options{MaxBodyBytes: 4096, ChunkBytes: 64}).Process(ms)
		for _, d := range r.allDecisions() {
			if s := d.state(); s.doneCalls != 1 {
				t.Fatalf("Done called %d times", s.doneCalls)
			}
		}
		for _, resp := range ms.sent {
			if sb := resp.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse(); len(sb.GetBody()) > 64 {
				t.Fatalf("chunk of %d bytes", len(sb.GetBody()))
			}
		}
	})
}
