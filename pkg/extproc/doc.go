// Package extproc is kvpick's Envoy ext_proc v3 server: it reads each HTTP
// request's headers and body from the gateway, asks a route.Decider where the
// request goes, answers with the destination header and envoy.lb metadata, and
// follows the response for the request's lifecycle (first token, usage, end).
package extproc
