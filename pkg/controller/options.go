package controller

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// PoolGroup is the only InferencePool API group kvpick reads (v1).
const PoolGroup = "inference.networking.k8s.io"

// Options say what to watch and where to write it.
type Options struct {
	// Namespace holds the pool and its pods; the informer cache sees no other.
	Namespace string
	// PoolName selects pool mode: the InferencePool's selector and target ports decide.
	PoolName string
	// PoolGroup must be PoolGroup (the reference picker's flag; other groups are refused).
	PoolGroup string
	// Selector and TargetPorts are pool-less mode (used when PoolName is empty).
	Selector    map[string]string
	TargetPorts []int
	// Kube is the label/annotation vocabulary and timings.
	Kube v1.Kubernetes
	// Set receives the candidate set.
	Set *endpoints.Set
	// Objectives receives name → priority whenever InferenceObjectives change:
	// BaseObjectives (the config file's) overridden by the cluster's. Nil ignores them.
	Objectives     func(map[string]int)
	BaseObjectives map[string]int
	Log            logr.Logger
}

// Validate reports every problem with the options at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("namespace: required"))
	}
	if o.PoolName == "" && len(o.Selector) == 0 {
		errs = append(errs, errors.New("give a pool name (--pool-name) or an endpoint selector (--endpoint-selector)"))
	}
	if o.PoolName != "" && len(o.Selector) > 0 {
		errs = append(errs, errors.New("--pool-name and --endpoint-selector are exclusive"))
	}
	if o.PoolName == "" && len(o.Selector) > 0 && len(o.TargetPorts) == 0 {
		errs = append(errs, errors.New("--endpoint-selector needs --endpoint-target-ports"))
	}
	if o.PoolName != "" && o.PoolGroup != "" && o.PoolGroup != PoolGroup {
		errs = append(errs, fmt.Errorf("pool group %q not supported: only %s/v1", o.PoolGroup, PoolGroup))
	}
	if o.Set == nil {
		errs = append(errs, errors.New("set: required"))
	}
	return errors.Join(errs...)
}
