package strictyaml

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// scalar decodes a single value into a string, bool, integer or float field.
// It checks YAML's resolved tag, so "8000" quoted stays a string and an
// unquoted yes is not taken for a boolean.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want %s, got %s", want(v.Kind()), kindName(n))
		return
	}
	var err error
	switch v.Kind() {
	case reflect.String:
		err = setString(n, v)
	case reflect.Bool:
		err = setBool(n, v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		err = setInt(n, v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		err = setUint(n, v)
	case reflect.Float32, reflect.Float64:
		err = setFloat(n, v)
	default:
		err = fmt.Errorf("strictyaml: unsupported field type %s", v.Type())
	}
	if err != nil {
		d.fail(n, path, "%v", err)
	}
}

func want(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + k.String()
}

func wrong(v reflect.Value, n *yaml.Node) error {
	return fmt.Errorf("want %s, got %q", want(v.Kind()), n.Value)
}

func setString(n *yaml.Node, v reflect.Value) error {
	if n.Tag != "!!str" {
		return fmt.Errorf("want a string, got %s %s: quote it if it is meant as text", strings.TrimLeft(n.ShortTag(), "!"), n.Value)
	}
	v.SetString(n.Value)
	return nil
}

func setBool(n *yaml.Node, v reflect.Value) error {
	var b bool
	if n.Tag != "!!bool" || n.Decode(&b) != nil {
		return wrong(v, n)
	}
	v.SetBool(b)
	return nil
}

func setInt(n *yaml.Node, v reflect.Value) error {
	var i int64
	if n.Tag != "!!int" || n.Decode(&i) != nil {
		return wrong(v, n)
	}
	if v.OverflowInt(i) {
		return fmt.Errorf("%s is out of range for this field", n.Value)
	}
	v.SetInt(i)
	return nil
}

func setUint(n *yaml.Node, v reflect.Value) error {
	var i uint64
	if n.Tag != "!!int" || n.Decode(&i) != nil {
		return fmt.Errorf("want a non-negative integer, got %q", n.Value)
	}
	if v.OverflowUint(i) {
		return fmt.Errorf("%s is out of range for this field", n.Value)
	}
	v.SetUint(i)
	return nil
}

func setFloat(n *yaml.Node, v reflect.Value) error {
	var f float64
	if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
		return wrong(v, n)
	}
	if v.OverflowFloat(f) {
		return fmt.Errorf("%s is out of range for this field", n.Value)
	}
	v.SetFloat(f)
	return nil
}
