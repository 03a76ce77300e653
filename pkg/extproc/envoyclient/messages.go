package envoyclient

import (
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// headersMessage is the first message: request headers, protocol_config and the subset hint.
func headersMessage(req Request) *extprocv3.ProcessingRequest {
	mode := filterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	if req.Mode == Buffered {
		mode = filterv3.ProcessingMode_BUFFERED
	}
	return &extprocv3.ProcessingRequest{
		Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{
			Headers: headerMap(requestHeaders(req)), EndOfStream: req.Body == nil}},
		ProtocolConfig:  &extprocv3.ProtocolConfiguration{RequestBodyMode: mode, ResponseBodyMode: mode},
		MetadataContext: subsetMetadata(req),
	}
}

func requestHeaders(req Request) map[string]string {
	method := req.Method
	if method == "" {
		method = "POST"
	}
	h := map[string]string{":method": method, ":path": req.Path, ":scheme": "http", ":authority": "gateway.local"}
	if req.Body != nil {
		h["content-type"] = "application/json"
		h["content-length"] = strconv.Itoa(len(req.Body))
	}
	for k, v := range req.Headers {
		h[strings.ToLower(k)] = v
	}
	return h
}

func headerMap(h map[string]string) *corev3.HeaderMap {
	hm := &corev3.HeaderMap{Headers: make([]*corev3.HeaderValue, 0, len(h))}
	for k, v := range h {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: k, RawValue: []byte(v)})
	}
	return hm
}

func subsetMetadata(req Request) *corev3.Metadata {
	if !req.SubsetPresent {
		return nil
	}
	vals := make([]*structpb.Value, len(req.Subset))
	for i, s := range req.Subset {
		vals[i] = structpb.NewStringValue(s)
	}
	list := structpb.NewListValue(&structpb.ListValue{Values: vals})
	ns := &structpb.Struct{Fields: map[string]*structpb.Value{subsetKey: list}}
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{subsetNamespace: ns}}
}

func bodyMessage(response bool, data []byte, eos bool) *extprocv3.ProcessingRequest {
	b := &extprocv3.HttpBody{Body: data, EndOfStream: eos}
	if response {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{ResponseBody: b}}
	}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{RequestBody: b}}
}

type chunk struct {
	data []byte
	last bool
}

// split cuts body by the plan (sizes cycled; nil or non-positive sizes = one chunk). An empty body is one empty
// end-of-stream chunk.
func split(body []byte, plan []int) []chunk {
	if len(body) == 0 {
		return []chunk{{data: body, last: true}}
	}
	var out []chunk
	for off, i := 0, 0; off < len(body); i++ {
		n := len(body) - off
		if len(plan) > 0 && plan[i%len(plan)] > 0 {
			n = min(n, plan[i%len(plan)])
		}
		out = append(out, chunk{data: body[off : off+n], last: off+n == len(body)})
		off += n
	}
	return out
}
