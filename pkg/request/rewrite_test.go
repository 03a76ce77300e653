package request

import (
	"encoding/json"
	"testing"
)

func TestWithModel(t *testing.T) {
	cases := []struct{ body, model, want string }{
		{`{"model":"a","prompt":"x"}`, "b", `{"model":"b","prompt":"x"}`},
		{`{"prompt":"x", "model" : "a\u0041" ,"n":1}`, `q"uote`, `{"prompt":"x", "model" : "q\"uote" ,"n":1}`},
		{`{"model":"long-model-name","prompt":"x"}`, "m", `{"model":"m","prompt":"x"}`},
	}
	for _, tc := range cases {
		r, err := Parse(KindCompletions, []byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := WithModel(r, tc.model)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want || r.Model != tc.model {
			t.Errorf("WithModel(%s, %q) = %s (model %q), want %s", tc.body, tc.model, got, r.Model, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON %s", got)
		}
	}
	if _, err := WithModel(&Request{}, "m"); err == nil {
		t.Error("a request without a parsed model was rewritten")
	}
}
