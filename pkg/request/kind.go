package request

import (
	"strings"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// String names the kind the way logs and metrics label it.
func (k Kind) String() string {
	switch k {
	case KindCompletions:
		return "completions"
	case KindChatCompletions:
		return "chat_completions"
	case KindResponses:
		return "responses"
	case KindEmbeddings:
		return "embeddings"
	case KindModels:
		return "models"
	}
	return "unknown"
}

// apiSuffixes maps the paths of the parsed APIs; a request path matches by
// suffix, so a gateway prefix (/openai/v1/chat/completions) is the same API.
var apiSuffixes = [...]struct {
	suffix string
	kind   Kind
}{
	{"/v1/chat/completions", KindChatCompletions},
	{"/v1/completions", KindCompletions},
	{"/v1/responses", KindResponses},
	{"/v1/embeddings", KindEmbeddings},
	{"/v1/models", KindModels},
}

// KindForPath maps a request path (query string ignored, e.g.
// "/v1/chat/completions?x=1") to a Kind by suffix, so "/openai/v1/completions"
// is KindCompletions; one trailing slash is tolerated and "/v1/models/<id>" is
// KindModels. Other paths give an *apierr.Error 404 naming the path.
func KindForPath(path string) (Kind, error) {
	p := path
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	for _, a := range apiSuffixes {
		if strings.HasSuffix(p, a.suffix) {
			return a.kind, nil
		}
	}
	if i := strings.LastIndex(p, "/v1/models/"); i >= 0 && i+len("/v1/models/") < len(p) {
		return KindModels, nil
	}
	return KindUnknown, apierr.NotFound("unknown path %q", path)
}
