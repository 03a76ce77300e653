package workload

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is an arrival process: Poisson at Rate when Burstiness <= 1,
// otherwise gamma-distributed gaps with squared coefficient of variation
// Burstiness (the same mean rate, arrivals clumped into bursts).
type Arrivals struct {
	// Rate is the mean arrival rate in requests per second.
	Rate float64
	// Burstiness is the squared coefficient of variation of the gaps; <= 1
	// means Poisson (1).
	Burstiness float64
}

// Times returns n arrival offsets starting at start.
func (a Arrivals) Times(rng *rand.Rand, n int, start time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	t := float64(start) / float64(time.Second)
	for i := range out {
		out[i] = time.Duration(t * float64(time.Second))
		t += a.gap(rng)
	}
	return out
}

func (a Arrivals) gap(rng *rand.Rand) float64 {
	if a.Rate <= 0 {
		return 0
	}
	mean := 1 / a.Rate
	if a.Burstiness <= 1 {
		return rng.ExpFloat64() * mean
	}
	shape := 1 / a.Burstiness
	return gamma(rng, shape) * mean / shape
}

// gamma draws from Gamma(shape, 1) (Marsaglia and Tsang; shape < 1 by the
// boost G(k) = G(k+1) * U^(1/k)).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// NewRand returns the generator a workload uses for seed and a stream name,
// so generators built from one seed draw independent numbers.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), mix64(stream)))
}
