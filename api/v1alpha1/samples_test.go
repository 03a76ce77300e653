package v1alpha1

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The shipped sample must stay a valid config.
func TestSampleConfigIsValid(t *testing.T) {
	c, err := LoadFile("../../config/samples/kvpick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Endpoints.File); err != nil { // resolved against the sample's folder
		t.Fatal(err)
	}
}

// The sample lists every field the printed defaults have (README: "lists
// every field with its default"), so a new tunable cannot ship unlisted.
// Fields a Dynamo flag also sets are listed commented (a value set in the
// file that disagrees with a flag stops start-up), so a commented key
// counts: each printed key's last name must start a line (after an
// optional "# ") or an entry of a flow map, in its top-level section.
func TestSampleListsEveryDefaultField(t *testing.T) {
	sample, err := os.ReadFile("../../config/samples/kvpick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Router.Mode = ModeKV // the admission fields are printed only where the queue can be on
	c.SetDefaults()
	out, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(sample), "\n") {
		if m := topKey.FindStringSubmatch(line); m != nil {
			section = m[1]
		}
		for _, m := range anyKey.FindAllStringSubmatch(line, -1) {
			listed[section+"/"+m[1]] = true
		}
	}
	for _, k := range keyOrder(t, out) {
		parts := strings.Split(k, ".")
		if !listed[parts[0]+"/"+parts[len(parts)-1]] {
			t.Errorf("config/samples/kvpick.yaml does not list %s", k)
		}
	}
}

var (
	topKey = regexp.MustCompile(`^([a-zA-Z]+):`)
	anyKey = regexp.MustCompile(`(?:^\s*|^\s*#\s*|[{,]\s*)([a-zA-Z]+):`) // a key, commented or not, or one in a flow map
)
