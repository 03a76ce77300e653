package v1alpha1

import (
	"os"
	"testing"
)

// The shipped sample must stay a valid config.
func TestSampleConfigIsValid(t *testing.T) {
	c, err := LoadFile("../../config/samples/kvpick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Endpoints.File); err != nil { // resolved against the sample's folder
		t.Fatal(err)
	}
}
