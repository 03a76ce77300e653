// Package cli gives the project's four binaries one command-line manner:
// --help prints a line saying what the binary is, its usage and its flags to
// stdout and exits 0; a bad flag or a start-up failure is plain text on
// stderr, prefixed with the binary's name, and exits 2.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ExitUsage is the exit status of a bad command line or a start-up failure.
const ExitUsage = 2

// Program describes a binary for its --help.
type Program struct {
	Name     string // e.g. "kvpick"
	About    string // one line: what the binary is
	Synopsis string // e.g. "kvpick --endpoints-file FILE [flags]"
	Notes    string // optional paragraph after the flags (examples, where to read more)
}

// Usage writes the help text: About, the synopsis, the flags, then Notes.
func (p Program) Usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s: %s\n\nUsage: %s\n\nFlags:\n", p.Name, p.About, p.Synopsis)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	if p.Notes != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(p.Notes))
	}
}

// Parse parses args into fs. On -h/--help it writes the usage to stdout and
// returns flag.ErrHelp; on a bad flag it returns an error that names the flag
// and points at --help. Neither prints the flag package's own messages.
func (p Program) Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		p.Usage(stdout, fs)
		return flag.ErrHelp
	case err != nil:
		return fmt.Errorf("%w (run '%s --help' for the flags)", err, p.Name)
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q (run '%s --help' for the flags)", fs.Args(), p.Name)
	}
	return nil
}

// Fail writes err to stderr as plain text (each line of a multi-line error
// indented under a first line naming the program) and returns the exit
// status: 0 for nil or flag.ErrHelp, else code.
func (p Program) Fail(stderr io.Writer, err error, code int) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	fmt.Fprintf(stderr, "%s: %s\n", p.Name, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(stderr, "  %s\n", l)
	}
	return code
}
