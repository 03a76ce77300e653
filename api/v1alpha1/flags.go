package v1alpha1

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// binding ties one command-line flag to one config field. set applies the
// flag's value; it reports the field's previous value when the file had set it
// to something else, so that a disagreement stops start-up.
type binding struct {
	flag, field string
	set         func(c *Config, raw string) (conflict string, err error)
}

// FlagBindings maps NVIDIA Dynamo's router flag names (and --router-mode) onto
// config fields, so users can keep the flags they know. Flags Dynamo has and
// kvpick has no counterpart for are accepted and reported by Warnings.
type FlagBindings struct {
	fs       *flag.FlagSet
	bindings []binding
	ignored  map[string]string // flag -> why it has no effect
	warnings []string
}

// BindFlags registers the Dynamo-compatible flags on fs (see flags_dynamo.go).
func BindFlags(fs *flag.FlagSet) *FlagBindings {
	b := &FlagBindings{fs: fs, ignored: map[string]string{}}
	b.dynamo()
	return b
}

// Apply writes every flag given on the command line into c (a file-parsed
// config, before defaults). A flag that disagrees with a value the file set is
// an error naming both. Given flags without a counterpart become Warnings.
func (b *FlagBindings) Apply(c *Config) error {
	b.warnings = b.warnings[:0]
	given := map[string]string{}
	b.fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	var errs []error
	for _, bd := range b.bindings {
		raw, ok := given[bd.flag]
		if !ok {
			continue
		}
		conflict, err := bd.set(c, raw)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--%s: %w", bd.flag, err))
		case conflict != "":
			errs = append(errs, fmt.Errorf("--%s=%s disagrees with config field %s=%s: set one of them", bd.flag, raw, bd.field, conflict))
		}
	}
	for name := range given {
		if why, ok := b.ignored[name]; ok {
			b.warnings = append(b.warnings, fmt.Sprintf("--%s is accepted for Dynamo compatibility but has no effect in kvpick: %s", name, why))
		}
	}
	sort.Strings(b.warnings)
	return errors.Join(errs...)
}

// Warnings lists, after Apply, the given flags that kvpick accepts but does
// not act on, each naming the flag and why.
func (b *FlagBindings) Warnings() []string { return b.warnings }

type rawValue struct{ s string }

func (v *rawValue) String() string     { return v.s }
func (v *rawValue) Set(s string) error { v.s = s; return nil }

type boolValue struct{ rawValue }

func (v *boolValue) IsBoolFlag() bool { return true }

// choiceValue is a raw value limited to a few spellings.
type choiceValue struct {
	rawValue
	valid []string
}

func (v *choiceValue) Set(s string) error {
	if !contains(v.valid, s) {
		return fmt.Errorf("must be one of %v, got %q", v.valid, s)
	}
	v.s = s
	return nil
}

// add registers the flag under every name (the first is current, the rest
// obsolete aliases Dynamo still accepts).
func (b *FlagBindings) add(names []string, field, usage string, isBool bool, set func(*Config, string) (string, error)) {
	for i, name := range names {
		u := usage + " (config: " + field + ")"
		if i > 0 {
			u = "obsolete alias of --" + names[0]
		}
		var v flag.Value = &rawValue{}
		if isBool {
			v = &boolValue{}
		}
		b.fs.Var(v, name, u)
		b.bindings = append(b.bindings, binding{flag: name, field: field, set: set})
	}
}

// ignore registers flags that are accepted and have no effect; why goes into
// the warning.
func (b *FlagBindings) ignore(why string, isBool bool, names ...string) {
	for _, name := range names {
		var v flag.Value = &rawValue{}
		if isBool {
			v = &boolValue{}
		}
		b.fs.Var(v, name, "Dynamo flag accepted without effect: "+why)
		b.ignored[name] = why
	}
}

// ignoreChoice registers a Dynamo flag without effect whose value must still
// be one Dynamo accepts, so a misspelt value fails as it would there.
func (b *FlagBindings) ignoreChoice(why, name string, valid ...string) {
	b.fs.Var(&choiceValue{valid: valid}, name, fmt.Sprintf("Dynamo flag accepted without effect (%v): %s", valid, why))
	b.ignored[name] = why
}

func (b *FlagBindings) str(names []string, field, usage string, get func(*Config) *string, valid ...string) {
	b.add(names, field, usage, false, func(c *Config, raw string) (string, error) {
		if len(valid) > 0 && !contains(valid, raw) {
			return "", fmt.Errorf("must be one of %v, got %q", valid, raw)
		}
		return setStrField(get(c), raw), nil
	})
}

func setStrField(p *string, v string) (conflict string) {
	if *p != "" && *p != v {
		return *p
	}
	*p = v
	return ""
}

// float binds a float flag; with nullable, the literal None (Dynamo's way to
// turn a check off) leaves the field unset.
func (b *FlagBindings) float(names []string, field, usage string, nullable bool, get func(*Config) **float64) {
	b.add(names, field, usage, false, func(c *Config, raw string) (string, error) {
		p := get(c)
		if nullable && raw == "None" {
			if *p != nil {
				return strconv.FormatFloat(**p, 'g', -1, 64), nil
			}
			return "", nil
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return "", fmt.Errorf("not a number: %q", raw)
		}
		if *p != nil && **p != v {
			return strconv.FormatFloat(**p, 'g', -1, 64), nil
		}
		*p = &v
		return "", nil
	})
}

func (b *FlagBindings) intp(names []string, field, usage string, get func(*Config) **int) {
	b.add(names, field, usage, false, func(c *Config, raw string) (string, error) {
		v, err := strconv.Atoi(raw)
		if err != nil {
			return "", fmt.Errorf("not an integer: %q", raw)
		}
		p := get(c)
		if *p != nil && **p != v {
			return strconv.Itoa(**p), nil
		}
		*p = &v
		return "", nil
	})
}

// intField binds an int field whose zero value means unset.
func (b *FlagBindings) intField(names []string, field, usage string, get func(*Config) *int) {
	b.add(names, field, usage, false, func(c *Config, raw string) (string, error) {
		v, err := strconv.Atoi(raw)
		if err != nil {
			return "", fmt.Errorf("not an integer: %q", raw)
		}
		p := get(c)
		if *p != 0 && *p != v {
			return strconv.Itoa(*p), nil
		}
		*p = v
		return "", nil
	})
}

// seconds binds a duration field given as (fractional) seconds. The flag
// also sets each of also that the config file left unset.
func (b *FlagBindings) seconds(names []string, field, usage string, get func(*Config) *Duration, also ...func(*Config) *Duration) {
	b.add(names, field, usage, false, func(c *Config, raw string) (string, error) {
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || v <= 0 {
			return "", fmt.Errorf("not a positive number of seconds: %q", raw)
		}
		d, p := time.Duration(v*float64(time.Second)), get(c)
		if p.Duration != 0 && p.Duration != d {
			return p.Duration.String(), nil
		}
		p.Duration = d
		for _, g := range also {
			if q := g(c); q.Duration == 0 {
				q.Duration = d
			}
		}
		return "", nil
	})
}

// observation binds a negatable Dynamo bool that selects the KV observation
// path: on means events, off predicted.
func (b *FlagBindings) observation(names []string, on bool) {
	usage := "use the engines' KV events (the events observation path)"
	if !on {
		usage = "use the predicted observation path (no engine KV events)"
	}
	b.add(names, "kv.observation", usage, true, func(c *Config, raw string) (string, error) {
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return "", fmt.Errorf("not a boolean: %q", raw)
		}
		want := ObservePredicted
		if v == on {
			want = ObserveEvents
		}
		return setStrField(&c.KV.Observation, want), nil
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
