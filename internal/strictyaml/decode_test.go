package strictyaml

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type dur struct{ time.Duration }

func (d *dur) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return errors.New("want a duration like \"120s\"")
	}
	d.Duration = v
	return nil
}

type inner struct {
	Weight *float64 `json:"overlapWeight,omitempty"`
	Count  int      `json:"count"`
}

type sample struct {
	Mode   string         `json:"mode"`
	On     bool           `json:"on"`
	Small  int8           `json:"small"`
	TTL    dur            `json:"ttl"`
	Inner  inner          `json:"kvCost"`
	Names  []string       `json:"names"`
	Prio   map[string]int `json:"prio"`
	List   []inner        `json:"list"`
	hidden int
}

func TestDecodeValid(t *testing.T) {
	var s sample
	err := Decode([]byte("mode: kv\non: true\nsmall: -3\nttl: 2m\nkvCost: {overlapWeight: 2, count: 3}\nnames: [a, b]\nprio: {x: 1}\nlist: [{count: 4}]\n"), &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != "kv" || !s.On || s.Small != -3 || s.TTL.Duration != 2*time.Minute || *s.Inner.Weight != 2 ||
		s.Inner.Count != 3 || len(s.Names) != 2 || s.Prio["x"] != 1 || s.List[0].Count != 4 {
		t.Fatalf("decoded %+v", s)
	}
}

func TestDecodeNullAndEmptyKeepZero(t *testing.T) {
	for _, doc := range []string{"", "# only a comment\n", "kvCost:\n", "kvCost: null\nmode: ~\n"} {
		var s sample
		if err := Decode([]byte(doc), &s); err != nil || s.Inner.Weight != nil || s.Mode != "" {
			t.Errorf("%q: %+v %v", doc, s, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // each must appear, in this order, one per problem
	}{
		{"wrong kind number", "kvCost:\n  overlapWeight: high\n", []string{`kvCost.overlapWeight: want a number, got "high" (line 2)`}},
		{"unknown field", "colour: kv\n", []string{`colour: unknown field (known here: kvCost, list, mode, names, on, prio, small, ttl) (line 1)`}},
		{"typo", "mood: kv\nkvCost: {overlapWieght: 1}\n", []string{`mood: unknown field, did you mean "mode"? (line 1)`, `kvCost.overlapWieght: unknown field, did you mean "overlapWeight"? (line 2)`}},
		{"wrong case", "MODE: random\nkvCost: {overlapweight: 2}\n", []string{`MODE: unknown field: keys are case-sensitive, did you mean "mode"?`, `kvCost.overlapweight: unknown field: keys are case-sensitive, did you mean "overlapWeight"?`}},
		{"duration names its field", "ttl: 2 minutes\n", []string{`ttl: want a duration like "120s" (line 1)`}},
		{"every problem at once", "mode: 3\non: yes\nsmall: 300\nnames: a\nlist: [{count: x}]\n", []string{
			"mode: want a string, got int 3", `on: want true or false, got "yes"`, "small: 300 is out of range",
			`names: want a list, got "a"`, `list[0].count: want an integer, got "x" (line 5)`}},
		{"duplicate key", "mode: a\nmode: b\n", []string{"mode: key given twice (line 2)"}},
		{"custom tag", "mode: !x kv\n", []string{"mode: want a string, got x kv: quote it"}},
		{"odd map key", "prio: {a.b: x}\n", []string{`prio["a.b"]: want an integer`}},
		{"mapping where scalar", "mode: {a: 1}\n", []string{"mode: want a string, got a mapping"}},
		{"top level not a mapping", "- a\n", []string{"(document): want a mapping of fields, got a list"}},
		{"syntax", "mode: [\n", []string{"not valid YAML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s sample
			err := Decode([]byte(tc.doc), &s)
			if err == nil {
				t.Fatal("want an error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestFieldErrorsAreReachable(t *testing.T) {
	var s sample
	err := Decode([]byte("small: x\n"), &s)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "small" || fe.Line != 1 {
		t.Fatalf("errors.As: %v %+v", err, fe)
	}
}

type tree []tree

func TestAliasBomb(t *testing.T) {
	items := []string{"&a [" + strings.Repeat("[], ", 9) + "[]]"}
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		items = append(items, "&"+name+" ["+strings.Repeat("*"+prev+", ", 9)+"*"+prev+"]")
		prev = name
	}
	doc := "names: [" + strings.Join(items, ", ") + "]\n"
	var s struct {
		Names tree `json:"names"`
	}
	err := Decode([]byte(doc), &s)
	if err == nil || !strings.Contains(err.Error(), "more than") || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("want one expansion error, got %.200v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("mode: kv\nkvCost: {overlapWeight: 2}\nlist: [{count: 1}]\nprio: {a: 1}\n"))
	f.Add([]byte("a: &a [1]\nnames: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s sample
		err := Decode(data, &s)
		if err == nil {
			return
		}
		var l List
		if errors.As(err, &l) && len(l) == 0 {
			t.Fatal("empty error list")
		}
	})
}
