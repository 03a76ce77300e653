package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

var prog = Program{Name: "demo", About: "a test binary that does one thing", Synopsis: "demo [flags]", Notes: "Example: demo -n 3"}

func newFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Int("n", 1, "how many")
	return fs
}

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string // "" = nil; "help" = flag.ErrHelp
		stdout  []string
	}{
		{"ok", []string{"-n", "2"}, "", nil},
		{"help", []string{"--help"}, "help", []string{"demo: a test binary that does one thing\n", "Usage: demo [flags]", "-n int", "how many", "Example: demo -n 3"}},
		{"short help", []string{"-h"}, "help", []string{"demo: a test binary"}},
		{"unknown flag", []string{"-x"}, "flag provided but not defined: -x (run 'demo --help' for the flags)", nil},
		{"bad value", []string{"-n", "many"}, `invalid value "many" for flag -n`, nil},
		{"stray argument", []string{"extra"}, `unexpected arguments ["extra"]`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := prog.Parse(newFlags(), tc.args, &out)
			switch {
			case tc.wantErr == "" && err != nil, tc.wantErr == "help" && !errors.Is(err, flag.ErrHelp):
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && tc.wantErr != "help" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if !strings.HasPrefix(out.String(), "demo: ") && tc.wantErr == "help" {
				t.Errorf("help must start with what the binary is, got %q", out.String())
			}
			for _, w := range tc.stdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if tc.wantErr != "help" && out.Len() > 0 {
				t.Errorf("nothing expected on stdout, got %q", out.String())
			}
		})
	}
}

func TestFail(t *testing.T) {
	var out bytes.Buffer
	if got := prog.Fail(&out, nil, 2); got != 0 || out.Len() != 0 {
		t.Fatalf("nil: %d %q", got, out.String())
	}
	if got := prog.Fail(&out, flag.ErrHelp, 2); got != 0 || out.Len() != 0 {
		t.Fatalf("help: %d %q", got, out.String())
	}
	got := prog.Fail(&out, errors.New("config file a.yaml:\nx: bad (line 1)\ny: bad (line 2)"), ExitUsage)
	want := "demo: config file a.yaml:\n  x: bad (line 1)\n  y: bad (line 2)\n"
	if got != 2 || out.String() != want {
		t.Fatalf("got %d %q, want 2 %q", got, out.String(), want)
	}
}
