// Package strictyaml decodes YAML into Go structs the way a config file should
// be read: keys match the fields' json tags exactly (case included), unknown
// keys and wrong kinds are errors, and every problem is reported at once with
// its field path and line, in YAML's terms rather than JSON's or Go's.
package strictyaml

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the nodes one document may expand to through aliases, so a
// small file of nested aliases (a "billion laughs") cannot exhaust memory.
const maxNodes = 1 << 20

// Decode decodes data into out, a pointer to a struct. An empty document
// leaves out unchanged. On error out may be partly written: callers decode
// into a fresh value. The error is a List when the YAML parsed.
func Decode(data []byte, out any) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return errors.New("strictyaml: out must be a non-nil pointer")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	d := &decoder{}
	d.value(doc.Content[0], v.Elem(), "")
	if len(d.errs) > 0 {
		return d.errs
	}
	return nil
}

type decoder struct {
	errs  List
	nodes int
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// value decodes n into v (settable). A null node leaves v unchanged.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.nodes++; d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.fail(n, path, "document expands to more than %d nodes (aliases)", maxNodes)
		}
		return
	}
	if n.Kind == yaml.AliasNode {
		d.value(n.Alias, v, path)
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, v.Elem(), path)
		return
	}
	if reflect.PointerTo(v.Type()).Implements(textUnmarshaler) {
		d.text(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Map:
		d.mapping(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func (d *decoder) text(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want a single value, got %s", kindName(n))
		return
	}
	if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
		d.fail(n, path, "%v", err)
	}
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of keys to values, got %s", kindName(n))
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.fail(n, path, "strictyaml: map keys must be strings, not %s", v.Type().Key())
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.key(k, path, seen) {
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.value(val, elem, join(path, k.Value))
		v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
}

// key checks that k is a scalar key not seen before in this mapping.
func (d *decoder) key(k *yaml.Node, path string, seen map[string]bool) bool {
	if k.Kind != yaml.ScalarNode {
		d.fail(k, path, "want a plain key, got %s", kindName(k))
		return false
	}
	if seen[k.Value] {
		d.fail(k, join(path, k.Value), "key given twice")
		return false
	}
	seen[k.Value] = true
	return true
}

// join appends a key to a field path; keys that are not plain words are quoted.
func join(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' ") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}
