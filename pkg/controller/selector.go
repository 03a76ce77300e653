package controller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// ParseSelector parses the reference picker's --endpoint-selector format: a
// comma-separated list of key=value pairs without whitespace
// ("app=vllm,env=prod"). Keys and values must be valid label keys and values.
func ParseSelector(s string) (map[string]string, error) {
	if s == "" {
		return nil, fmt.Errorf("endpoint selector: empty")
	}
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("endpoint selector: %q is not key=value", pair)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("endpoint selector: key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("endpoint selector: value %q of %s: %s", v, k, strings.Join(errs, "; "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("endpoint selector: key %q given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// ParsePorts parses --endpoint-target-ports: comma-separated port numbers,
// duplicates dropped (as the reference picker does), at most v1.MaxTargetPorts.
func ParsePorts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("endpoint target ports: %q is not a port number (1-65535)", f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > v1.MaxTargetPorts {
		return nil, fmt.Errorf("endpoint target ports: %d given, at most %d", len(out), v1.MaxTargetPorts)
	}
	return out, nil
}
