package extproc

import (
	"github.com/kvpick/kvpick/pkg/request"
)

// Request headers of the Gateway API Inference Extension ecosystem. Since the
// reference picker moved to llm-d it reads the x-llm-d-* names first and keeps
// the x-gateway-* names as deprecated aliases.
const (
	HeaderObjective         = "x-llm-d-inference-objective"
	HeaderObjectiveAlias    = "x-gateway-inference-objective"
	HeaderFairnessID        = "x-llm-d-inference-fairness-id"
	HeaderFairnessIDAlias   = "x-gateway-inference-fairness-id"
	HeaderModelRewrite      = "x-llm-d-model-name-rewrite"
	HeaderModelRewriteAlias = "x-gateway-model-name-rewrite"
	// HeaderDroppedReason is set on every refusal, as the reference picker does.
	HeaderDroppedReason = "x-llm-d-request-dropped-reason"
	// HeaderForwardedPath is the last place the request path is looked for.
	HeaderForwardedPath = "x-forwarded-path"
)

// headerAliases pairs each current name with its deprecated alias.
var headerAliases = [...][2]string{
	{HeaderObjective, HeaderObjectiveAlias},
	{HeaderFairnessID, HeaderFairnessIDAlias},
	{HeaderModelRewrite, HeaderModelRewriteAlias},
}

// resolveAliases gives each aliased header one value under both names: the
// current name's when it is set, else the alias's. The Router may read either.
func resolveAliases(h map[string]string) {
	for _, a := range headerAliases {
		v := h[a[0]]
		if v == "" {
			v = h[a[1]]
		}
		if v != "" {
			h[a[0]], h[a[1]] = v, v
		}
	}
}

// pathHeaders are where the request path may be, in the order they are read.
var pathHeaders = [...]string{":path", HeaderOriginalPath, HeaderForwardedPath}

// requestPath picks the first of :path, x-original-path and x-forwarded-path
// that names an API the picker parses (a route may have rewritten :path), else
// the first one present, whose kind is then KindUnknown: such a request is
// routed by load alone.
func requestPath(h map[string]string) (string, request.Kind) {
	first := ""
	for _, name := range pathHeaders {
		p := h[name]
		if p == "" {
			continue
		}
		if kind, err := request.KindForPath(p); err == nil {
			return p, kind
		}
		if first == "" {
			first = p
		}
	}
	return first, request.KindUnknown
}
