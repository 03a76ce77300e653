package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// workload builds the request bodies: each word is a space and four word
// bytes, which the approximate tokenizer (modelsim's tokenizer) counts as
// exactly one token.
func workload(o options) []genRequest {
	rng := rand.New(rand.NewPCG(o.seed, 42))
	prefix := words(rng, int(6000*o.scale), "policy")
	out := make([]genRequest, o.requests)
	for i := range out {
		kind, prompt := "shared", prefix+words(rng, 100, fmt.Sprintf("q%d", i))
		if o.workload == "unique" || rng.Float64() < 0.2 {
			kind, prompt = "doc", words(rng, int(12000*o.scale), fmt.Sprintf("doc%d", i))
		}
		body := fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`,
			o.model, prompt, o.maxTokens)
		out[i] = genRequest{kind: kind, body: []byte(body)}
	}
	return out
}

func words(rng *rand.Rand, n int, tag string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " %s%03x", tag[:1], rng.IntN(1<<12)) // one approximate token each
	}
	return b.String()
}
