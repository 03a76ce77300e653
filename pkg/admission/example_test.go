package admission_test

import (
	"fmt"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
)

// A simulator drives Core in virtual time: Arrive (then Release) on each
// arrival, Release when capacity frees, Expire at NextDeadline. The predicate
// reserves capacity when it lets an item go.
func ExampleCore() {
	free := 1
	canGo := func(*admission.Item[string]) bool {
		if free == 0 {
			return false
		}
		free-- // reserve
		return true
	}
	c := admission.NewCore[string](admission.Options{MaxWait: 10 * time.Second})
	t0 := time.Unix(0, 0)
	for i, prio := range []int{0, 0, 5} {
		it := &admission.Item[string]{Priority: prio, Value: fmt.Sprint("req", i)}
		now := t0.Add(time.Duration(i) * time.Second)
		if went, _, _ := c.Arrive(it, now, canGo); went {
			fmt.Println(it.Value, "dispatched at once")
			continue
		}
		c.Release(now, canGo)
	}
	deadline, _ := c.NextDeadline()
	fmt.Println("queued:", c.Len(), "next deadline at", deadline.Sub(t0))

	free++ // req0 finished its prefill
	for _, it := range c.Release(t0.Add(5*time.Second), canGo) {
		fmt.Println(it.Value, "dispatched after", t0.Add(5*time.Second).Sub(it.EnqueuedAt()))
	}
	for _, it := range c.Expire(deadline) {
		fmt.Println(it.Value, "timed out")
	}
	// Output:
	// req0 dispatched at once
	// queued: 2 next deadline at 11s
	// req2 dispatched after 3s
	// req1 timed out
}
