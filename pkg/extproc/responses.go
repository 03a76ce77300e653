package extproc

import (
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// decisionResponse carries the decision: the destination header (plus the Decision's headers), clear_route_cache
// and the envoy.lb metadata with the same value. inBody puts it on a body response (buffered mode) instead of the
// headers response; contentLength >= 0 sets content-length to the length of the body the picker returns.
func (st *stream) decisionResponse(inBody bool, contentLength int) *extprocv3.ProcessingResponse {
	dest := st.destination()
	set := []*corev3.HeaderValueOption{setHeader(HeaderDestination, dest)}
	for _, h := range st.dec.Headers() {
		set = append(set, setHeader(h.Key, h.Value))
	}
	if inBody && st.rewritten {
		contentLength = len(st.body)
	}
	if contentLength >= 0 {
		set = append(set, setHeader("content-length", strconv.Itoa(contentLength)))
	}
	common := &extprocv3.CommonResponse{HeaderMutation: &extprocv3.HeaderMutation{SetHeaders: set}, ClearRouteCache: true}
	if inBody && st.rewritten {
		common.BodyMutation = &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: st.body}}
	}
	r := &extprocv3.ProcessingResponse{DynamicMetadata: destinationMetadata(dest)}
	if inBody {
		r.Response = &extprocv3.ProcessingResponse_RequestBody{RequestBody: &extprocv3.BodyResponse{Response: common}}
	} else {
		r.Response = &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: &extprocv3.HeadersResponse{Response: common}}
	}
	return r
}

// destinationMetadata is {"envoy.lb": {"x-gateway-destination-endpoint": dest}}.
func destinationMetadata(dest string) *structpb.Struct {
	inner := &structpb.Struct{Fields: map[string]*structpb.Value{MetadataKeyDestination: structpb.NewStringValue(dest)}}
	return &structpb.Struct{Fields: map[string]*structpb.Value{MetadataNamespace: structpb.NewStructValue(inner)}}
}

func setHeader(k, v string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: k, RawValue: []byte(v)},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

// streamedBody is one FULL_DUPLEX_STREAMED body chunk handed back to the proxy.
func streamedBody(req bool, chunk []byte, eos bool) *extprocv3.ProcessingResponse {
	br := &extprocv3.BodyResponse{Response: &extprocv3.CommonResponse{BodyMutation: &extprocv3.BodyMutation{
		Mutation: &extprocv3.BodyMutation_StreamedResponse{StreamedResponse: &extprocv3.StreamedBodyResponse{
			Body: chunk, EndOfStream: eos}}}}}
	if req {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{RequestBody: br}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: br}}
}

func headersContinue() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extprocv3.HeadersResponse{}}}
}

func bodyContinue() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{
		RequestBody: &extprocv3.BodyResponse{}}}
}

// immediate is an error answer: status, JSON body, content-type application/json.
func immediate(code int, body []byte, typ string) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{
		ImmediateResponse: &extprocv3.ImmediateResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode(code)},
			Headers: &extprocv3.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{setHeader("content-type", "application/json"),
				setHeader(HeaderDroppedReason, typ)}},
			Body:    body,
			Details: "kvpick_" + typ,
		}}}
}
