package v1alpha1

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Parse decodes a YAML config strictly (unknown fields are errors) without
// applying defaults, so callers can tell what the file set.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	return c, nil
}

// LoadFile reads and parses path; an empty path gives an empty Config.
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
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
