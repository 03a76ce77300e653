package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Marshal writes c as YAML with its fields in declaration order, which is the
// order of config/samples/kvpick.yaml, so --print-config reads beside the sample.
func Marshal(c *Config) ([]byte, error) {
	j, err := json.Marshal(c) // JSON keeps struct order and the fields' omitempty rules
	if err != nil {
		return nil, fmt.Errorf("print config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, fmt.Errorf("print config: %w", err)
	}
	blockStyle(&doc)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("print config: %w", err)
	}
	return out.Bytes(), enc.Close()
}

// blockStyle drops the flow style and quotes JSON gave every node; the
// encoder quotes again only the strings that need it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
