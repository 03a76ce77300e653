package endpoints

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/yaml"
)

// File is the standalone endpoints file.
type File struct {
	Endpoints []Endpoint `json:"endpoints"`
}

// ParseFile decodes and validates an endpoints file strictly; every problem is
// reported with the endpoint's index.
func ParseFile(data []byte) ([]Endpoint, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("decode endpoints: %w", err)
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

// LoadFile reads path and replaces the set's contents.
func LoadFile(path string, set *Set) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read endpoints file: %w", err)
	}
	eps, err := ParseFile(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return set.Replace(eps)
}

// WatchFile reloads path whenever its content changes, checking every
// interval. A bad file is logged and the previous set kept. Returns when ctx ends.
func WatchFile(ctx context.Context, path string, interval time.Duration, set *Set, log logr.Logger) {
	last, _ := os.ReadFile(path)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		data, err := os.ReadFile(path)
		if err != nil || bytes.Equal(data, last) {
			continue
		}
		last = data
		eps, err := ParseFile(data)
		if err == nil {
			err = set.Replace(eps)
		}
		if err != nil {
			log.Error(err, "endpoints file rejected, keeping the previous set", "path", path)
			continue
		}
		log.Info("endpoints reloaded", "path", path, "count", len(eps))
	}
}
