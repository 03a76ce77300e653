package v1alpha1

import "time"

// IndexStride is the number of prompt blocks one prefix-index entry stands
// for: kv.predictedStride on the predicted path (the index keeps every Nth
// block of a chain), 1 on the events path (the engines report every block).
// The router, the index's capacity bound and the simulator all read it here.
func (k *KV) IndexStride() int {
	if k.Observation == ObservePredicted {
		return max(k.PredictedStride, 1)
	}
	return 1
}

// LongestPredictedTTL is the longest a predicted block lasts on any endpoint
// (kv.predictedTTL or kv.predictedTTLKnownCapacity): how far back replica
// sync's snapshots reach.
func (k *KV) LongestPredictedTTL() time.Duration {
	return max(k.PredictedTTL.Duration, k.PredictedTTLKnownCapacity.Duration)
}
