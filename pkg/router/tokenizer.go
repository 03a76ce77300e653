package router

import (
	"fmt"
	"net/http"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

// newTokenizer builds kv.tokenizer: a local one, or "remote" over the pool's
// own endpoints.
func newTokenizer(kv *v1.KV, set *endpoints.Set) (tokenize.Tokenizer, error) {
	if t, ok := tokenize.Local(kv.Tokenizer); ok {
		return t, nil
	}
	if kv.Tokenizer != v1.TokenizerRemote {
		return nil, fmt.Errorf("router: kv.tokenizer %q is not known", kv.Tokenizer)
	}
	return tokenize.NewPool(func(model string) []string { return tokenizeTargets(set, model) },
		&http.Client{}, kv.TokenizerTimeout.Duration), nil
}

// tokenizeTargets are the base URLs of the endpoints that serve model and are
// not excluded by scraping.
func tokenizeTargets(set *endpoints.Set, model string) []string {
	var out []string
	for _, e := range set.Snapshot().List {
		if e.Serves(model, "") && !e.Load().Excluded {
			out = append(out, "http://"+e.Key())
		}
	}
	return out
}
