package v1alpha1

import "time"

// Default returns a Config with every default filled in.
func Default() *Config {
	c := &Config{}
	c.SetDefaults()
	return c
}

func ptr[T any](v T) *T { return &v }

// SetDefaults fills every unset field with its default. Fields set by the
// user are kept.
func (c *Config) SetDefaults() {
	c.Server.setDefaults()
	if c.Endpoints.ReloadInterval.Duration == 0 {
		c.Endpoints.ReloadInterval = D(2 * time.Second)
	}
	c.Router.setDefaults()
	c.Admission.setDefaults(c.Router.Mode)
	c.KV.setDefaults()
	c.Scrape.setDefaults()
	c.Kubernetes.setDefaults()
	c.ReplicaSync.setDefaults()
}

func (s *Server) setDefaults() {
	setStr(&s.GRPCAddr, ":9002")
	setStr(&s.MetricsAddr, ":9090")
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = 32 << 20
	}
	setDur(&s.ShutdownGrace, 30*time.Second)
	if s.GCPercent == nil {
		s.GCPercent = ptr(400)
	}
}

func (r *Router) setDefaults() {
	setStr(&r.Mode, ModeKV)
	if r.Fallbacks == nil {
		r.Fallbacks = ptr(2)
	}
	setStr(&r.OverrideHeader, "x-gateway-destination-endpoint-override")
	if r.KVCost.OverlapWeight == nil {
		r.KVCost.OverlapWeight = ptr(1.0)
	}
	if r.KVCost.Temperature == nil {
		r.KVCost.Temperature = ptr(0.0)
	}
	if r.KVCost.ActiveRequestWeight == nil {
		r.KVCost.ActiveRequestWeight = ptr(0.0)
	}
	r.KVCost.setTimeDefaults()
	setStr(&r.Session.Header, "x-session-id")
	setDur(&r.Session.TTL, 10*time.Minute)
	setStr(&r.DeviceAware.Label, "kvpick.io/device")
	if r.DeviceAware.Weights == nil {
		r.DeviceAware.Weights = map[string]float64{"gpu": 8, "cpu": 1}
	}
}

// setDefaults: queueing is part of kv mode's defaults; other modes queue only
// when a threshold is set. queue: false turns it off whatever the threshold.
func (a *Admission) setDefaults(mode string) {
	if a.Queue == nil {
		a.Queue = ptr(a.QueueThreshold != nil || mode == ModeKV)
	}
	if !*a.Queue {
		a.QueueThreshold, a.AffinityThreshold = nil, nil
	} else {
		if a.QueueThreshold == nil {
			a.QueueThreshold = ptr(0.25)
		}
		if a.AffinityThreshold == nil {
			a.AffinityThreshold = ptr(1.0)
		}
	}
	setStr(&a.QueuePolicy, QueueWSPT)
	if a.MaxQueueLength == 0 {
		a.MaxQueueLength = 1024
	}
	setDur(&a.MaxQueueWait, 30*time.Second)
	if a.LateAfter == nil {
		a.LateAfter = &Duration{Duration: 8 * time.Second}
	}
	if a.LateWindow == nil {
		a.LateWindow = &Duration{Duration: 30 * time.Second}
	}
}

// LateWindowOrNone is admission.lateWindow (0: no bound).
func (a *Admission) LateWindowOrNone() time.Duration {
	if a.LateWindow == nil {
		return 0
	}
	return a.LateWindow.Duration
}

// LateAfterOrOff is admission.lateAfter (0 when off).
func (a *Admission) LateAfterOrOff() time.Duration {
	if a.LateAfter == nil {
		return 0
	}
	return a.LateAfter.Duration
}

func (k *KV) setDefaults() {
	setStr(&k.Observation, ObserveAuto)
	if k.EventsBridge == nil {
		k.EventsBridge = ptr(false) // opt-in: see the field's comment
	}
	setDur(&k.EventsSilenceAfter, time.Minute)
	if k.UnmatchedAlarmAfter == 0 {
		k.UnmatchedAlarmAfter = 8
	}
	setDur(&k.UnmatchedProbeSettle, 2*time.Second)
	if k.BlockSize == 0 {
		k.BlockSize = 16
	}
	setDur(&k.PredictedTTL, 120*time.Second)
	setDur(&k.PredictedTTLKnownCapacity, 600*time.Second)
	if k.PredictedStride == 0 {
		k.PredictedStride = 4
	}
	if k.MaxBlocksPerEndpoint == 0 {
		k.MaxBlocksPerEndpoint = 1 << 20
	}
	if k.PruneTarget == nil {
		k.PruneTarget = ptr(1.0)
	}
	setDur(&k.ActiveWorkTTL, 300*time.Second)
	if k.Observation == ObservePredicted {
		setStr(&k.Tokenizer, TokenizerBytes)
	}
	setStr(&k.Tokenizer, TokenizerApproximate)
	setDur(&k.TokenizerTimeout, time.Second)
	if k.EventsPort == 0 {
		k.EventsPort = 5557
	}
	if k.HostHitWeight == nil {
		k.HostHitWeight = ptr(0.75)
	}
	if k.DiskHitWeight == nil {
		k.DiskHitWeight = ptr(0.25)
	}
}

func (s *Scrape) setDefaults() {
	setDur(&s.Interval, 100*time.Millisecond)
	setDur(&s.Timeout, time.Second)
	setDur(&s.StaleAfter, 2*time.Second)
	if s.ExcludeAfter == 0 {
		s.ExcludeAfter = 5
	}
	setStr(&s.Path, "/metrics")
	if s.EnginePaths == nil {
		s.EnginePaths = map[string]string{}
	}
	if _, ok := s.EnginePaths["trtllm"]; !ok {
		s.EnginePaths["trtllm"] = "/prometheus/metrics"
	}
}

func setStr(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

func setDur(p *Duration, v time.Duration) {
	if p.Duration == 0 {
		p.Duration = v
	}
}
