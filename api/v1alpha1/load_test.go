package v1alpha1

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The messages a user sees for the mistakes issue 13 listed: YAML terms, the
// field path, the line, every problem at once.
func TestParseErrorsNameFieldAndLine(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // one per problem, in order
	}{
		{"typo", "server:\n  grpcAdr: \":9002\"\n", []string{"server.grpcAdr: unknown field", "(line 2)"}},
		{"number", "router:\n  kvCost:\n    overlapWeight: high\n", []string{`router.kvCost.overlapWeight: want a number, got "high" (line 3)`}},
		{"duration", "kv:\n  predictedTTL: 2 minutes\n", []string{`kv.predictedTTL: want a duration such as "120s"`, `got "2 minutes" (line 2)`}},
		{"wrong case", "router:\n  MODE: random\n  kvCost: {overlapweight: 2}\n", []string{
			`router.MODE: unknown field: keys are case-sensitive, did you mean "mode"? (line 2)`,
			`router.kvCost.overlapweight: unknown field: keys are case-sensitive, did you mean "overlapWeight"? (line 3)`}},
		{"all at once", "server:\n  plaintext: maybe\nscrape:\n  interval: 5\nobjectives:\n  batch: low\n", []string{
			`server.plaintext: want true or false, got "maybe" (line 2)`,
			`scrape.interval: want a duration`,
			`objectives.batch: want an integer, got "low" (line 6)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, "json") || strings.Contains(msg, "Go struct") {
				t.Errorf("error speaks JSON/Go: %s", msg)
			}
			lines := strings.Split(msg, "\n")
			if tc.name != "typo" && tc.name != "duration" && len(lines) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(lines), len(tc.want), msg)
			}
			for i, w := range tc.want {
				line := lines[min(i, len(lines)-1)]
				if !strings.Contains(line, w) {
					t.Errorf("problem %d = %q, want %q", i, line, w)
				}
			}
		})
	}
}

func TestLoadFileResolvesPathsAgainstItsFolder(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "kvpick.yaml")
	abs := filepath.Join(dir, "abs.pem")
	doc := "endpoints:\n  file: eps/endpoints.yaml\nserver:\n  certFile: tls/cert.pem\n  keyFile: " + abs + "\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoints.File != filepath.Join(dir, "eps/endpoints.yaml") || c.Server.CertFile != filepath.Join(dir, "tls/cert.pem") || c.Server.KeyFile != abs {
		t.Fatalf("paths not resolved against %s: %+v %+v", dir, c.Endpoints, c.Server)
	}
}

func TestLoadFileNamesTheFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(cfg, []byte("kv:\n  blockSize: many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(cfg)
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "kv.blockSize") {
		t.Fatalf("got %v", err)
	}
}

// --print-config output parses back to the same config and keeps the sample's key order.
func TestMarshalRoundTripsInSampleOrder(t *testing.T) {
	sample, err := os.ReadFile("../../config/samples/kvpick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	out, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("printed config does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c, back) {
		t.Fatalf("round trip changed the config:\n%s", out)
	}
	assertSubsequence(t, keyOrder(t, sample), keyOrder(t, out))
}

// keyOrder lists a YAML document's mapping keys as dotted paths, in document order.
func keyOrder(t *testing.T, doc []byte) []string {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind == yaml.DocumentNode {
			walk(n.Content[0], prefix)
			return
		}
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := prefix + n.Content[i].Value
			keys = append(keys, k)
			walk(n.Content[i+1], k+".")
		}
	}
	walk(&n, "")
	return keys
}

func assertSubsequence(t *testing.T, sample, printed []string) {
	t.Helper()
	pos := map[string]int{}
	for i, k := range printed {
		pos[k] = i
	}
	last, lastKey := -1, ""
	for _, k := range sample {
		i, ok := pos[k]
		if !ok || strings.HasPrefix(k, "objectives.") || strings.HasPrefix(k, "router.deviceAware.weights.") {
			continue // omitted zero values; map keys print sorted
		}
		if i < last {
			t.Errorf("--print-config puts %s before %s; the sample has it after", k, lastKey)
		}
		last, lastKey = i, k
	}
}
