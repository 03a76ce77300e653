package extproc

// Names the Endpoint Picker protocol fixes (see the EPP protocol proposal).
const (
	// HeaderDestination carries the chosen endpoint list (ip:port[,ip:port...]) to the proxy.
	HeaderDestination = "x-gateway-destination-endpoint"
	// HeaderOriginalPath overrides :path when a route rewrote it before the picker.
	HeaderOriginalPath = "x-original-path"
	// MetadataNamespace is the dynamic metadata namespace the proxy's load balancer reads.
	MetadataNamespace = "envoy.lb"
	// MetadataKeyDestination holds the same value as HeaderDestination.
	MetadataKeyDestination = "x-gateway-destination-endpoint"
	// MetadataKeyServed is where the proxy reports the endpoint that actually served (response path).
	MetadataKeyServed = "x-gateway-destination-endpoint-served"
	// SubsetNamespace is the filter metadata namespace of the proxy's subset hint.
	SubsetNamespace = "envoy.lb.subset_hint"
	// SubsetKey holds the subset hint: a list of ip:port strings (or one comma-separated string).
	SubsetKey = "x-gateway-destination-endpoint-subset"
	// MaxChunkBytes is the largest body chunk the picker returns to the proxy.
	MaxChunkBytes = 62000
)
