package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// probe checks, before any request, that something listens at addr and that
// it speaks the transport gatewaysim will use, so a TLS setting that does not
// match the picker's is reported as that rather than as a dial timeout that
// reads like "nothing listening". It offers a TLS handshake: a TLS picker
// completes it; a plaintext gRPC server drops the connection on seeing it.
func probe(addr string, wantTLS bool, timeout time.Duration) error {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("nothing is listening at %s (is kvpick running, and is --picker its --grpc-addr?): %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("probe %s: %w", addr, err)
	}
	// Verification is off on purpose: the probe only asks whether the peer speaks TLS.
	hs := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}) //nolint:gosec
	err = hs.Handshake()
	switch {
	case err == nil && !wantTLS:
		return fmt.Errorf("TLS mismatch: the picker at %s serves TLS but gatewaysim was given --plaintext: "+
			"drop --plaintext, or start kvpick with --plaintext", addr)
	case err != nil && wantTLS && errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("the picker at %s did not answer a TLS handshake within %v: %w", addr, timeout, err)
	case err != nil && wantTLS:
		return fmt.Errorf("TLS mismatch: the picker at %s serves plaintext gRPC (kvpick --plaintext) but gatewaysim "+
			"uses TLS: add --plaintext, or start kvpick without --plaintext (handshake: %v)", addr, err)
	}
	return nil
}
