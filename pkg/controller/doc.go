// Package controller is the Kubernetes feed of the candidate set: it watches
// an InferencePool (or, pool-less, a label selector and target ports) and the
// Pods in its namespace, and writes every Ready pod's target ports into the
// same endpoints.Set the standalone file mode feeds. It also turns
// InferenceObjectives into the priorities admission reads, and reports
// whether the API server is reachable. Reconciles are level-based: every
// event recomputes the whole set from the informer cache.
package controller
