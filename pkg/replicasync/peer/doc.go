// Package peer is replica sync's network transport: every picker replica
// dials every peer over gRPC and pushes its own request-lifecycle events
// (replicasync.Event) to it, fire-and-forget. On each (re)connect the sender
// first pushes a snapshot of its in-flight work, which replaces what the
// receiver held for it; a peer whose stream stays down longer than the expiry
// bound has its entries expired on the receiver.
//
// Every received byte comes from a stream the receiver authenticated (shared
// secret in gRPC metadata, compared in constant time, and/or a client
// certificate verified against a CA): nothing else is applied. Sending never
// blocks the request path: each peer has a bounded queue, and events that do
// not fit are dropped and counted.
//
// The service is hand-written (grpc.ServiceDesc, no protoc) with a compact,
// length-checked binary codec of its own (codec.go).
package peer
