package peer

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	grpcpeer "google.golang.org/grpc/peer"
)

// Auth is how a receiver tells a peer from a stranger. At least one of its
// two checks must be on (Validate); when both are, a peer must pass both.
type Auth struct {
	// Secret is the shared secret every replica sends; empty turns the check off.
	Secret []byte
	// ClientCAs, when set, requires a client certificate verified against it
	// (mutual TLS; the listener must then use ServerTLS).
	ClientCAs *x509.CertPool
}

// Validate reports an Auth that would let anybody in.
func (a Auth) Validate() error {
	if len(a.Secret) == 0 && a.ClientCAs == nil {
		return errors.New("peer auth: neither a shared secret nor a client CA is set: anybody could inject load")
	}
	return nil
}

var errUnauthenticated = errors.New("unauthenticated")

// check authenticates the stream's caller and returns the replica id it
// claims. The secret is compared in constant time (on digests, so its length
// does not leak either).
func (a Auth) check(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(a.Secret) > 0 {
		got := sha256.Sum256([]byte(first(md, mdSecret)))
		want := sha256.Sum256(a.Secret)
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return "", fmt.Errorf("%w: missing or wrong shared secret", errUnauthenticated)
		}
	}
	if a.ClientCAs != nil && !verifiedClient(ctx) {
		return "", fmt.Errorf("%w: no verified client certificate", errUnauthenticated)
	}
	id := first(md, mdReplica)
	if id == "" || len(id) > maxString {
		return "", fmt.Errorf("replica id (metadata %s): must be 1 to %d bytes, got %d", mdReplica, maxString, len(id))
	}
	return id, nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// verifiedClient reports whether the TLS handshake verified a client chain.
func verifiedClient(ctx context.Context) bool {
	p, ok := grpcpeer.FromContext(ctx)
	if !ok {
		return false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	return ok && len(info.State.VerifiedChains) > 0
}

// ReadSecret reads a shared secret file, trimming surrounding whitespace
// (a trailing newline from `echo` or a Kubernetes Secret). Empty is an error.
func ReadSecret(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("peer secret: %w", err)
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return nil, fmt.Errorf("peer secret %s: empty", path)
	}
	return []byte(s), nil
}

// LoadCAs reads a PEM bundle of CA certificates.
func LoadCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("peer CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("peer CA %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// ServerTLS returns base (the gRPC server's TLS) with client certificates
// required and verified against cas; base unchanged when cas is nil.
func ServerTLS(base *tls.Config, cas *x509.CertPool) *tls.Config {
	if base == nil || cas == nil {
		return base
	}
	c := base.Clone()
	c.ClientCAs, c.ClientAuth = cas, tls.RequireAndVerifyClientCert
	return c
}

// ClientTLS is the dialer's TLS. With cas set, it presents certFile/keyFile
// as its client certificate and verifies the peer's chain against cas
// (peers are dialled by pod IP, so no host name is checked); without, it
// accepts any server certificate (the default self-signed one), and the
// shared secret is the authentication.
func ClientTLS(certFile, keyFile string, cas *x509.CertPool) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // verified below when cas is set
	if cas == nil {
		return c, nil
	}
	if certFile == "" {
		return nil, errors.New("peer mTLS: a client CA needs server.certFile/keyFile as this replica's certificate")
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return nil, fmt.Errorf("peer mTLS: %w", err)
	}
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile) // per handshake: follows rotation
		return &cert, err
	}
	c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, cas) }
	return c, nil
}

func verifyChain(cs tls.ConnectionState, cas *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: cas, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("peer certificate: %w", err)
	}
	return nil
}
