package endpoints

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/internal/strictyaml"
)

// File is the standalone endpoints file.
type File struct {
	Endpoints []Endpoint `json:"endpoints"`
}

// ParseFile decodes and validates an endpoints file strictly (case-sensitive
// keys, unknown keys are errors); every problem is reported, each with its
// path such as endpoints[1].port and, for decode errors, its line.
func ParseFile(data []byte) ([]Endpoint, error) {
	var f File
	if err := strictyaml.Decode(data, &f); err != nil {
		return nil, err
	}
	var errs []error
	seen := map[string]int{}
	for i := range f.Endpoints {
		ep := &f.Endpoints[i]
		if err := ep.validate(); err != nil {
			errs = append(errs, fmt.Errorf("endpoints[%d]: %w", i, err))
			continue
		}
		if j, dup := seen[ep.Key()]; dup {
			errs = append(errs, fmt.Errorf("endpoints[%d]: %s duplicates endpoints[%d]", i, ep.Key(), j))
		}
		seen[ep.Key()] = i
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f.Endpoints, nil
}

// FileSource keeps a set equal to a YAML endpoints file. Load and Watch
// must not run concurrently with each other.
type FileSource struct {
	path string
	set  *Set
	last []byte // content last applied (or rejected), to notice changes
}

// NewFileSource returns a source for path feeding set.
func NewFileSource(path string, set *Set) *FileSource { return &FileSource{path: path, set: set} }

// Load reads the file and replaces the set's contents. On error the set is unchanged.
func (f *FileSource) Load() error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("read endpoints file: %w", err)
	}
	f.last = data
	if len(bytes.TrimSpace(data)) == 0 {
		// What a writer leaves between truncating and writing: never a fleet
		// of zero (that is spelled "endpoints: []").
		return fmt.Errorf("%s: the endpoints file is empty (caught mid-write?); write \"endpoints: []\" to route to none", f.path)
	}
	eps, err := ParseFile(data)
	if err == nil {
		err = f.set.Replace(eps)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// Watch reloads the file whenever its content changes, checking every
// interval. New content is applied once it has been the same for two checks
// in a row, so a file caught mid-write (truncated, half written) is never
// applied. A bad file is logged and the previous set kept. Returns when ctx
// ends.
func (f *FileSource) Watch(ctx context.Context, interval time.Duration, log logr.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var pending []byte
	settling := false // pending holds content seen once (nil and empty differ here)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		data, err := os.ReadFile(f.path)
		if err != nil || bytes.Equal(data, f.last) {
			settling = false
			continue
		}
		if !settling || !bytes.Equal(data, pending) {
			pending, settling = data, true // settle for one more interval
			continue
		}
		settling = false
		if err := f.Load(); err != nil {
			log.Error(err, "endpoints file rejected, keeping the previous set", "path", f.path)
			continue
		}
		n := len(f.set.Snapshot().List)
		if n == 0 {
			log.Info("WARNING: the endpoints file now lists no endpoints; every request gets 503 until it lists some", "path", f.path)
			continue
		}
		log.Info("endpoints reloaded", "path", f.path, "count", n)
	}
}
