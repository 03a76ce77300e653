package request

import (
	"slices"
	"strings"
	"testing"
)

var fuzzKinds = []Kind{KindCompletions, KindChatCompletions, KindResponses, KindEmbeddings}

// FuzzParse checks that Parse never panics and agrees with the
// encoding/json-based reference on validity, on error-ness and on every
// extracted field.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(uint8(tc.kind), []byte(tc.body))
	}
	for _, tc := range parseErrorCases {
		f.Add(uint8(tc.kind), []byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := fuzzKinds[int(k)%len(fuzzKinds)]
		got, err := Parse(kind, body)
		want, refErr := refParse(kind, body)
		if (err != nil) != (refErr != nil) {
			t.Fatalf("kind %v body %q: Parse err %v, reference err %v", kind, body, err, refErr)
		}
		if err != nil {
			malformed := strings.Contains(err.Error(), "malformed JSON")
			if malformed != (refErr.Error() == "malformed JSON") {
				t.Fatalf("body %q: Parse err %v, reference err %v", body, err, refErr)
			}
			return
		}
		if diff := compareRequests(got, want); diff != "" {
			t.Fatalf("kind %v body %q: %s", kind, body, diff)
		}
		// ParseInto agrees, with a dirty scratch buffer reused from an earlier parse.
		scratch := []byte("leftover bytes from an earlier request")
		into, err := ParseInto(kind, body, &scratch)
		if err != nil {
			t.Fatalf("kind %v body %q: ParseInto err %v, Parse ok", kind, body, err)
		}
		if diff := compareRequests(into, want); diff != "" {
			t.Fatalf("ParseInto, kind %v body %q: %s", kind, body, diff)
		}
	})
}

// compareRequests names the first field where got and want differ.
func compareRequests(got, want *Request) string {
	switch {
	case got.Model != want.Model:
		return "Model: " + got.Model + " vs " + want.Model
	case string(got.Prompt) != string(want.Prompt):
		return "Prompt: " + strings.ReplaceAll(string(got.Prompt)+" vs "+string(want.Prompt), "\n", `\n`)
	case !slices.Equal(got.PromptTokenIDs, want.PromptTokenIDs):
		return "PromptTokenIDs differ"
	case got.Stream != want.Stream, got.IncludeUsage != want.IncludeUsage:
		return "Stream/IncludeUsage differ"
	case got.MaxTokens != want.MaxTokens:
		return "MaxTokens differ"
	case got.CacheSalt != want.CacheSalt, got.User != want.User:
		return "CacheSalt/User differ"
	case got.Kind != want.Kind || len(got.Raw) != len(want.Raw):
		return "Kind/Raw differ"
	}
	return ""
}
