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

// KindForPath maps a request path (query string ignored, e.g.
// "/v1/chat/completions?x=1") to a Kind; one trailing slash is tolerated and
// "/v1/models/<id>" is KindModels. Unknown paths give an *apierr.Error 404
// naming the path.
func KindForPath(path string) (Kind, error) {
	p := path
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	switch p {
	case "/v1/completions":
		return KindCompletions, nil
	case "/v1/chat/completions":
		return KindChatCompletions, nil
	case "/v1/responses":
		return KindResponses, nil
	case "/v1/embeddings":
		return KindEmbeddings, nil
	case "/v1/models":
		return KindModels, nil
	}
	if rest, ok := strings.CutPrefix(p, "/v1/models/"); ok && rest != "" {
		return KindModels, nil
	}
	return KindUnknown, apierr.NotFound("unknown path %q", path)
}
