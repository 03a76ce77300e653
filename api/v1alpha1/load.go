package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvpick/kvpick/internal/strictyaml"
)

// Parse decodes a YAML config strictly without applying defaults, so callers
// can tell what the file set. Keys are case-sensitive; unknown keys and values
// of the wrong kind are errors. Every problem is reported, one per line, each
// with its field path and line.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	if err := strictyaml.Decode(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadFile reads and parses path; an empty path gives an empty Config.
// Relative file paths inside the config resolve against the config file's
// folder, so a config and the files it names can move together.
func LoadFile(path string) (*Config, error) {
	if path == "" {
		return &Config{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, inFile(path, err)
	}
	c.resolvePaths(filepath.Dir(path))
	return c, nil
}

// resolvePaths makes the config's relative file paths relative to dir.
func (c *Config) resolvePaths(dir string) {
	for _, p := range []*string{&c.Endpoints.File, &c.Server.CertFile, &c.Server.KeyFile,
		&c.ReplicaSync.SecretFile, &c.ReplicaSync.ClientCAFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// inFile prefixes each line of a decode error with the file's name, as
// compilers do, so every problem can be read (and grepped) on its own.
func inFile(path string, err error) error { return &fileError{path: path, err: err} }

type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i, l := range lines {
		lines[i] = e.path + ": " + l
	}
	return strings.Join(lines, "\n")
}

func (e *fileError) Unwrap() error { return e.err }
