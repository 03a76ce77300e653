package extproc

import (
	"strings"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// readContext reads what a message carries besides its phase: the protocol configuration (first message only),
// observability mode, the subset hint (until routed) and the served endpoint (response path).
//
// Mode detection: Envoy sends protocol_config on the first message; its request_body_mode FULL_DUPLEX_STREAMED
// means the picker holds the headers response until it has routed and then echoes the body; NONE means no body
// comes (route at the headers); any other mode means Envoy waits for the headers response before sending the body,
// so the headers are answered at once and the decision rides on the body response. Without protocol_config
// (older Envoy) the picker assumes FULL_DUPLEX_STREAMED, the mode the EPP protocol requires, and the response
// body mode is assumed to equal the request's.
func (st *stream) readContext(msg *extprocv3.ProcessingRequest) {
	if !st.configured {
		st.configured = true
		if pc := msg.GetProtocolConfig(); pc != nil {
			st.reqMode = modeOf(pc.GetRequestBodyMode())
			st.respMode = modeOf(pc.GetResponseBodyMode())
		}
	}
	st.observe = st.observe || msg.GetObservabilityMode() // a filter setting: sticky for the stream
	md := msg.GetMetadataContext().GetFilterMetadata()
	if md == nil {
		return
	}
	if st.dec == nil && !st.subsetPresent {
		st.subset, st.subsetPresent = subsetHint(md[SubsetNamespace])
	}
	if st.dec != nil && !st.resp.servedSeen {
		st.served(stringField(md[MetadataNamespace], MetadataKeyServed))
	}
}

func modeOf(m filterv3.ProcessingMode_BodySendMode) bodyMode {
	switch m {
	case filterv3.ProcessingMode_FULL_DUPLEX_STREAMED:
		return modeStreamed
	case filterv3.ProcessingMode_NONE:
		return modeNone
	}
	return modeBuffered
}

// subsetHint reads the hint: a list of ip:port strings, or one comma-separated string (empty items dropped).
func subsetHint(ns *structpb.Struct) (eps []string, present bool) {
	v, ok := ns.GetFields()[SubsetKey]
	if !ok {
		return nil, false
	}
	eps = []string{}
	switch k := v.GetKind().(type) {
	case *structpb.Value_ListValue:
		for _, item := range k.ListValue.GetValues() {
			eps = appendSplit(eps, item.GetStringValue())
		}
	case *structpb.Value_StringValue:
		eps = appendSplit(eps, k.StringValue)
	}
	return eps, true
}

func appendSplit(dst []string, s string) []string {
	for part := range strings.SplitSeq(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			dst = append(dst, p)
		}
	}
	return dst
}

func stringField(ns *structpb.Struct, key string) string {
	return ns.GetFields()[key].GetStringValue()
}
