package controller

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	cases := []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"app=vllm", map[string]string{"app": "vllm"}, ""},
		{"app=vllm-qwen3-32b,env=prod", map[string]string{"app": "vllm-qwen3-32b", "env": "prod"}, ""},
		{"llm-d.ai/model=q,x=", map[string]string{"llm-d.ai/model": "q", "x": ""}, ""},
		{"", nil, "empty"},
		{"app", nil, `"app" is not key=value`},
		{"app=a b", nil, `value "a b"`},
		{"a=1,a=2", nil, "given twice"},
		{"=v", nil, `key ""`},
		{"app=vllm, env=prod", nil, `key " env"`},
	}
	for _, c := range cases {
		got, err := ParseSelector(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %v, %v, want %v", c.in, got, err, c.want)
		}
	}
}

func TestParsePorts(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{"8000", []int{8000}, ""},
		{"3000,3001,3000", []int{3000, 3001}, ""},
		{"1,2,3,4,5,6,7,8", []int{1, 2, 3, 4, 5, 6, 7, 8}, ""},
		{"1,2,3,4,5,6,7,8,9", nil, "at most 8"},
		{"0", nil, `"0" is not a port`},
		{"65536", nil, "not a port"},
		{"80,", nil, `"" is not a port`},
		{"http", nil, "not a port"},
	}
	for _, c := range cases {
		got, err := ParsePorts(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %v, %v, want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseSelector: any input gives a selector or an error, never a panic,
// and an accepted selector prints back to an equal one.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"app=vllm", "a=1,b=2", "", "=", "a=b=c", "x/y=z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSelector(s)
		if err != nil {
			return
		}
		var parts []string
		for k, v := range m {
			parts = append(parts, k+"="+v)
		}
		again, err := ParseSelector(strings.Join(parts, ","))
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("%q: round trip %v, %v", s, again, err)
		}
	})
}

// FuzzParsePorts: any input gives valid ports or an error, never a panic.
func FuzzParsePorts(f *testing.F) {
	for _, s := range []string{"8000", "1,2", "", ",", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParsePorts(s)
		if err != nil {
			return
		}
		if len(ps) == 0 || len(ps) > 8 {
			t.Fatalf("%q: %d ports", s, len(ps))
		}
		for _, p := range ps {
			if p < 1 || p > 65535 {
				t.Fatalf("%q: port %d", s, p)
			}
		}
	})
}
