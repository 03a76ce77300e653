package main

import (
	"fmt"
	"os"

	"github.com/kvpick/kvpick/pkg/endpoints"
)

// endpointNames maps "ip:port" to the endpoint's name in kvpick's endpoints
// file, so output reads "sim-0" rather than a port number. No file: no names.
func endpointNames(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--endpoints-file: %w", err)
	}
	eps, err := endpoints.ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("--endpoints-file %s:\n%w", path, err)
	}
	names := make(map[string]string, len(eps))
	for i := range eps {
		names[eps[i].Key()] = eps[i].Name
	}
	return names, nil
}

// display names an endpoint by its name when known, else by its address.
func display(addr string, names map[string]string) string {
	if n, ok := names[addr]; ok && n != "" {
		return n
	}
	return addr
}
