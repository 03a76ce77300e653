package endpoints

import (
	"strings"
	"testing"
)

// Decode errors name the endpoint's index, the field and the line, all at once.
func TestParseFileDecodeErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"wrong kind", "endpoints:\n  - name: a\n    address: 127.0.0.1\n    port: 8000\n  - name: b\n    address: 127.0.0.1\n    port: http\n",
			[]string{`endpoints[1].port: want an integer, got "http" (line 7)`}},
		{"typo and case", "endpoints:\n  - name: a\n    adress: 127.0.0.1\n    Port: 8000\n",
			[]string{"endpoints[0].adress: unknown field", `endpoints[0].Port: unknown field: keys are case-sensitive, did you mean "port"? (line 4)`}},
		{"capacity", "endpoints:\n  - {name: a, address: 127.0.0.1, port: 1, capacity: {blockSize: 16k}}\n",
			[]string{`endpoints[0].capacity.blockSize: want an integer, got "16k" (line 2)`}},
		{"not a list", "endpoints: {name: a}\n", []string{"endpoints: want a list, got a mapping (line 1)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.doc))
			if err == nil {
				t.Fatal("want an error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("problem %d = %q, want %q", i, lines[i], w)
				}
			}
		})
	}
}

// An empty list is valid (the picker warns and answers 503 until endpoints appear).
func TestParseFileEmptyList(t *testing.T) {
	eps, err := ParseFile([]byte("endpoints: []\n"))
	if err != nil || len(eps) != 0 {
		t.Fatalf("got %v, %v", eps, err)
	}
}
