package telemetry

import (
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// NewLogger returns a structured JSON logger writing to w (stderr when nil).
// verbosity 0 logs start-up, changes and warnings; 1 adds one line per
// decision; 2 adds per-event detail. Prompt text is never logged.
func NewLogger(w io.Writer, verbosity int) logr.Logger {
	if w == nil {
		w = os.Stderr
	}
	return funcr.NewJSON(func(obj string) { fmt.Fprintln(w, obj) },
		funcr.Options{LogTimestamp: true, Verbosity: verbosity, LogCaller: funcr.None})
}
