package v1alpha1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written in YAML as a Go duration string ("120s", "1m30s").
type Duration struct{ time.Duration }

// D builds a Duration.
func D(d time.Duration) Duration { return Duration{d} }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalText parses a duration string. A bare number is rejected because its unit would be a guess.
// The error names the value; the decoder adds the field path.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"120s\", \"1m30s\" or \"500ms\" (units ns, us, ms, s, m, h), got %q", b)
	}
	d.Duration = v
	return nil
}

// UnmarshalJSON accepts a duration string, for callers that hold the config as JSON.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"120s\", got %s", b)
	}
	return d.UnmarshalText([]byte(s))
}
