package endpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// WorkerID is a Dynamo worker instance id. Dynamo's frontend reads
// x-worker-instance-id as an unsigned 64-bit integer and ignores any other
// value, so only such ids are valid. YAML may give it as a number or a
// string; either way the digits are kept exactly (no float rounding).
type WorkerID string

// UnmarshalJSON accepts a JSON number or string.
func (w *WorkerID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*w = WorkerID(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*w = ""
		return nil
	}
	*w = WorkerID(b)
	return nil
}

// UnmarshalText takes the id as the file spells it, quoted or not: a YAML
// number is kept digit for digit (no float rounding past 2^53).
func (w *WorkerID) UnmarshalText(b []byte) error {
	*w = WorkerID(bytes.TrimSpace(b))
	return nil
}

// Validate reports an id that is set but not an unsigned 64-bit integer.
func (w WorkerID) Validate() error {
	if w == "" {
		return nil
	}
	if _, err := strconv.ParseUint(string(w), 10, 64); err != nil {
		return fmt.Errorf("workerId %q is not a Dynamo worker instance id (an unsigned 64-bit integer): Dynamo's frontend would ignore it", string(w))
	}
	return nil
}

// ErrNoWorkerID marks an endpoint without a workerId where one is required.
var ErrNoWorkerID = errors.New("no workerId")

// RequireWorkerIDs checks that every endpoint has a valid workerId, as
// router.workerHeaders needs: without one, a Dynamo frontend in direct mode
// would not know which worker was chosen.
func RequireWorkerIDs(s *Snapshot) error {
	var errs []error
	for _, e := range s.List {
		if e.WorkerID == "" {
			errs = append(errs, fmt.Errorf("endpoint %s (%s): %w", e.Name, e.Key(), ErrNoWorkerID))
		} else if err := e.WorkerID.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("endpoint %s (%s): %w", e.Name, e.Key(), err))
		}
	}
	return errors.Join(errs...)
}
