package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestResponse(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		typ, msg   string
		leakSubstr string
	}{
		{"bad request", BadRequest("missing %q", "model"), 400, TypeInvalidRequest, `missing "model"`, ""},
		{"wrapped", fmt.Errorf("route: %w", NotFound("model %q", "x")), 404, TypeNotFound, `model "x"`, ""},
		{"unavailable", Unavailable("no endpoints"), 503, TypeUnavailable, "no endpoints", ""},
		{"internal hides cause", errors.New("secret detail"), 500, TypeInternal, "internal error", "secret"},
	}
	for _, tc := range cases {
		status, body := Response(tc.err)
		var b struct {
			Error struct {
				Type, Message string
				Code          int
			}
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("%s: body %s: %v", tc.name, body, err)
		}
		if status != tc.status || b.Error.Type != tc.typ || b.Error.Message != tc.msg || b.Error.Code != tc.status {
			t.Errorf("%s: %d %+v", tc.name, status, b.Error)
		}
		if tc.leakSubstr != "" && strings.Contains(string(body), tc.leakSubstr) {
			t.Errorf("%s: body leaks %q", tc.name, tc.leakSubstr)
		}
	}
}
