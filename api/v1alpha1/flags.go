package v1alpha1

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
)

// binding ties one command-line flag to one config field. set applies the
// flag's value; it reports the field's previous value when the file had set it
// to something else, so that a disagreement stops start-up.
type binding struct {
	flag, field string
	value       flag.Value
	set         func(c *Config, raw string) (conflict string, err error)
}

// FlagBindings maps NVIDIA Dynamo's router flag names (and --router-mode) onto
// config fields, so users can keep the flags they know.
type FlagBindings struct {
	fs       *flag.FlagSet
	bindings []binding
}

// BindFlags registers the Dynamo-compatible flags on fs.
func BindFlags(fs *flag.FlagSet) *FlagBindings {
	b := &FlagBindings{fs: fs}
	b.str("router-mode", "router.mode", "router mode: "+fmt.Sprint(Modes), func(c *Config) *string { return &c.Router.Mode })
	b.float("router-queue-threshold", "admission.queueThreshold", "queue while every endpoint's active prefill tokens exceed this fraction of max batched tokens", func(c *Config) **float64 { return &c.Admission.QueueThreshold })
	b.float("active-decode-blocks-threshold", "router.busy.activeDecodeBlocks", "busy when active decode blocks exceed this fraction of KV blocks", func(c *Config) **float64 { return &c.Router.Busy.ActiveDecodeBlocks })
	b.intp("active-prefill-tokens-threshold", "router.busy.activePrefillTokens", "busy when active prefill tokens exceed this", func(c *Config) **int { return &c.Router.Busy.ActivePrefillTokens })
	b.float("active-prefill-tokens-threshold-frac", "router.busy.activePrefillTokensFrac", "busy when active prefill tokens exceed this fraction of max batched tokens", func(c *Config) **float64 { return &c.Router.Busy.ActivePrefillTokensFrac })
	b.float("router-kv-overlap-score-weight", "router.kvCost.overlapWeight", "weight of the prefill term in the kv cost", func(c *Config) **float64 { return &c.Router.KVCost.OverlapWeight })
	b.float("router-temperature", "router.kvCost.temperature", "softmax temperature of the kv picker (0 = lowest cost)", func(c *Config) **float64 { return &c.Router.KVCost.Temperature })
	b.float("router-decode-active-request-weight", "router.kvCost.activeRequestWeight", "per-active-request term in the kv cost", func(c *Config) **float64 { return &c.Router.KVCost.ActiveRequestWeight })
	b.noEvents()
	return b
}

// Apply writes every flag given on the command line into c (a file-parsed
// config, before defaults). A flag that disagrees with a value the file set is
// an error naming both.
func (b *FlagBindings) Apply(c *Config) error {
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
	return errors.Join(errs...)
}

type rawValue struct{ s string }

func (v *rawValue) String() string     { return v.s }
func (v *rawValue) Set(s string) error { v.s = s; return nil }

type boolValue struct{ rawValue }

func (v *boolValue) IsBoolFlag() bool { return true }

func (b *FlagBindings) add(name, field, usage string, v flag.Value, set func(*Config, string) (string, error)) {
	b.fs.Var(v, name, usage+" (config: "+field+")")
	b.bindings = append(b.bindings, binding{flag: name, field: field, value: v, set: set})
}

func (b *FlagBindings) str(name, field, usage string, get func(*Config) *string) {
	b.add(name, field, usage, &rawValue{}, func(c *Config, raw string) (string, error) {
		p := get(c)
		if *p != "" && *p != raw {
			return *p, nil
		}
		*p = raw
		return "", nil
	})
}

func (b *FlagBindings) float(name, field, usage string, get func(*Config) **float64) {
	b.add(name, field, usage, &rawValue{}, func(c *Config, raw string) (string, error) {
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return "", fmt.Errorf("not a number: %q", raw)
		}
		p := get(c)
		if *p != nil && **p != v {
			return strconv.FormatFloat(**p, 'g', -1, 64), nil
		}
		*p = &v
		return "", nil
	})
}

func (b *FlagBindings) intp(name, field, usage string, get func(*Config) **int) {
	b.add(name, field, usage, &rawValue{}, func(c *Config, raw string) (string, error) {
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

// noEvents is Dynamo's --no-router-kv-events: the predicted observation path.
func (b *FlagBindings) noEvents() {
	b.add("no-router-kv-events", "kv.observation", "use the predicted observation path (no engine KV events)", &boolValue{}, func(c *Config, raw string) (string, error) {
		on, err := strconv.ParseBool(raw)
		if err != nil {
			return "", fmt.Errorf("not a boolean: %q", raw)
		}
		want := ObserveEvents
		if on {
			want = ObservePredicted
		}
		if c.KV.Observation != "" && c.KV.Observation != want {
			return c.KV.Observation, nil
		}
		c.KV.Observation = want
		return "", nil
	})
}
