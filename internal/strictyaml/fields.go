package strictyaml

import (
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// structure decodes a mapping into a struct whose fields are named by their
// json tags. A key that matches a field only when case is ignored is rejected
// with the right spelling, since a silently ignored "MODE" is a setting lost.
func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of fields, got %s", kindName(n))
		return
	}
	fields := fieldsOf(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.key(k, path, seen) {
			continue
		}
		idx, ok := fields[k.Value]
		if !ok {
			d.fail(k, join(path, k.Value), "%s", unknownField(k.Value, fields))
			continue
		}
		d.value(val, v.Field(idx), join(path, k.Value))
	}
}

func unknownField(key string, fields map[string]int) string {
	names := make([]string, 0, len(fields))
	best, bestDist := "", 3 // suggest only names within two edits
	for name := range fields {
		if strings.EqualFold(name, key) {
			return "unknown field: keys are case-sensitive, did you mean \"" + name + "\"?"
		}
		if d := distance(strings.ToLower(key), strings.ToLower(name)); d < bestDist || (d == bestDist && name < best) {
			best, bestDist = name, d
		}
		names = append(names, name)
	}
	if best != "" {
		return "unknown field, did you mean \"" + best + "\"?"
	}
	sort.Strings(names)
	return "unknown field (known here: " + strings.Join(names, ", ") + ")"
}

// distance is the Levenshtein edit distance between a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fieldsOf maps a struct's YAML keys (json tag names) to field indexes.
// Unexported fields and fields tagged "-" are not keys.
func fieldsOf(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = i
	}
	return out
}
