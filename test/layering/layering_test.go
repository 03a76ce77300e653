// Package layering checks the import rules of docs/architecture.md with the
// go tool's own view of the packages (go list -deps), so a change that
// crosses a boundary fails a plain go test.
package layering

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kvpick/kvpick"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages is every package of the module with its direct imports and
// all its dependencies (tests excluded: the rules are about what ships).
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module+"/")] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// rule forbids packages matching from (a path or a prefix ending in "/") to
// depend, directly or not, on packages matching any of deny, except allow.
type rule struct {
	why   string
	from  []string
	deny  []string
	allow []string
}

func matches(path string, patterns []string) bool {
	for _, p := range patterns {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

var project = []string{module + "/"}

var rules = []rule{
	{why: "nothing under pkg/ imports cmd/", from: []string{"pkg/"}, deny: []string{module + "/cmd/"}},
	{why: "leaves import no project package", from: []string{"pkg/telemetry", "pkg/apierr", "internal/strictyaml"}, deny: project},
	{why: "the config API imports only its strict YAML decoder", from: []string{"api/"}, deny: project,
		allow: []string{module + "/internal/strictyaml"}},
	{why: "the contract links no transport or policy", from: []string{"pkg/route"}, deny: project,
		allow: []string{module + "/pkg/request", module + "/pkg/apierr"}},
	{why: "the simulator and the scheduler link no gRPC", from: []string{"pkg/fleetsim", "pkg/scheduler", "pkg/route", "pkg/router"},
		deny: []string{"google.golang.org/grpc", "google.golang.org/grpc/", "github.com/envoyproxy/"}},
	{why: "the transport reaches the deciding side only through pkg/route", from: []string{"pkg/extproc", "pkg/extproc/"},
		deny: []string{module + "/pkg/router", module + "/pkg/scheduler", module + "/pkg/admission", module + "/pkg/kvindex",
			module + "/pkg/activework", module + "/pkg/endpoints", module + "/pkg/tokenize"}},
	{why: "the deciding side does not know the transport", from: []string{"pkg/router", "pkg/scheduler", "pkg/admission"},
		deny: []string{module + "/pkg/extproc", module + "/pkg/extproc/"}},
	{why: "feeds write state, never through the router", from: []string{"pkg/kvfeed", "pkg/kvevents", "pkg/scrape", "pkg/endpoints", "pkg/kvindex", "pkg/controller", "pkg/replicasync", "pkg/replicasync/"},
		deny: []string{module + "/pkg/router", module + "/pkg/extproc", module + "/pkg/extproc/"}},
	{why: "state does not depend on feeds or deciders", from: []string{"pkg/endpoints", "pkg/kvindex", "pkg/activework"},
		deny: []string{module + "/pkg/scrape", module + "/pkg/kvevents", module + "/pkg/kvfeed", module + "/pkg/scheduler", module + "/pkg/router",
			module + "/pkg/replicasync", module + "/pkg/replicasync/"}},
	{why: "the replica-sync core links no gRPC (its network transport is pkg/replicasync/peer)", from: []string{"pkg/replicasync"},
		deny: []string{"google.golang.org/grpc", "google.golang.org/grpc/", module + "/pkg/replicasync/"}},
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range rules {
		t.Run(r.why, func(t *testing.T) {
			checked := 0
			for path, p := range pkgs {
				if !matches(path, r.from) {
					continue
				}
				checked++
				for _, d := range p.Deps {
					if matches(d, r.deny) && !matches(d, r.allow) {
						t.Errorf("%s depends on %s (via %s)", path, d, via(pkgs, p, d))
					}
				}
			}
			if checked == 0 {
				t.Fatalf("no package matches %v: the rule checks nothing", r.from)
			}
		})
	}
}

// via names the direct import of p through which it reaches dep.
func via(pkgs map[string]pkg, p pkg, dep string) string {
	for _, imp := range p.Imports {
		if imp == dep {
			return "a direct import"
		}
		if q, ok := pkgs[strings.TrimPrefix(imp, module+"/")]; ok {
			for _, d := range q.Deps {
				if d == dep {
					return imp
				}
			}
		}
	}
	return "?"
}

// TestRulesCanFail: the matcher flags a forbidden dependency (the rules above
// are not vacuous).
func TestRulesCanFail(t *testing.T) {
	bad := pkg{ImportPath: module + "/pkg/telemetry", Deps: []string{module + "/pkg/kvindex"}}
	r := rules[1]
	if !matches("pkg/telemetry", r.from) || !matches(bad.Deps[0], r.deny) || matches(bad.Deps[0], r.allow) {
		t.Fatal("a leaf importing kvindex would pass")
	}
	if matches("github.com/prometheus/client_golang/prometheus", r.deny) {
		t.Fatal("a third-party import counted as a project package")
	}
}
