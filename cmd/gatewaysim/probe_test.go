package main

import (
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/kvpick/kvpick/pkg/extproc"
)

// serveGRPC starts a real gRPC server on loopback, with TLS or without.
func serveGRPC(t *testing.T, withTLS bool) string {
	t.Helper()
	var opts []grpc.ServerOption
	if withTLS {
		conf, err := extproc.SelfSignedTLS()
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(conf)))
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	go s.Serve(lis) //nolint:errcheck // stopped below
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func TestProbe(t *testing.T) {
	tlsAddr, plainAddr := serveGRPC(t, true), serveGRPC(t, false)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	cases := []struct {
		name    string
		addr    string
		wantTLS bool
		want    string // "" = no error
	}{
		{"tls both", tlsAddr, true, ""},
		{"plaintext both", plainAddr, false, ""},
		{"client plaintext, picker TLS", tlsAddr, false, "TLS mismatch: the picker at " + tlsAddr + " serves TLS but gatewaysim was given --plaintext"},
		{"client TLS, picker plaintext", plainAddr, true, "TLS mismatch: the picker at " + plainAddr + " serves plaintext gRPC"},
		{"nothing listening", closed, true, "nothing is listening at " + closed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := probe(tc.addr, tc.wantTLS, 5*time.Second)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("probe = %v, want %q", err, tc.want)
			}
		})
	}
}
