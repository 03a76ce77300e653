package peer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA signs leaf certificates for the mTLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "peer-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// leaf writes a certificate for 127.0.0.1 (server and client use) and its key; returns the paths.
func (ca *testCA) leaf(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)  //nolint:errcheck
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600) //nolint:errcheck
	return certFile, keyFile
}

// With a client CA, only a replica whose certificate that CA signed gets
// its events applied: a stranger's certificate, or none, is refused in the
// handshake.
func TestMutualTLS(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	srvCert, srvKey := ca.leaf(t, "a")
	pair, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	base := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	r := startReceiver(t, "a", Auth{ClientCAs: ca.pool}, ServerTLS(base, ca.pool), "")

	strangerCert, strangerKey := other.leaf(t, "stranger")
	stranger, err := ClientTLS(strangerCert, strangerKey, other.pool) // trusts its own CA: fails on a's certificate too
	if err != nil {
		t.Fatal(err)
	}
	noCert, _ := ClientTLS("", "", nil)
	startSender(t, "stranger", newFakeCore(added("stranger", 1, 66)), nil, stranger, r.addr)
	startSender(t, "anon", newFakeCore(added("anon", 1, 77)), nil, noCert, r.addr)

	goodCert, goodKey := ca.leaf(t, "b")
	good, err := ClientTLS(goodCert, goodKey, ca.pool)
	if err != nil {
		t.Fatal(err)
	}
	startSender(t, "b", newFakeCore(added("b", 1, 1)), nil, good, r.addr)
	eventually(t, "the signed replica's snapshot", func() bool { return len(r.core.requests("b")) == 1 })
	time.Sleep(10 * hb) // the others had as long, and more retries
	for _, id := range []string{"stranger", "anon"} {
		if ids := r.core.requests(id); len(ids) > 0 {
			t.Errorf("%s's events applied without a certificate from the CA: %v", id, ids)
		}
	}
}

func TestAuthMustCheckSomething(t *testing.T) {
	if err := (Auth{}).Validate(); err == nil {
		t.Fatal("an Auth with no check validated")
	}
	if _, err := NewServer(ServerOptions{ID: "a", Core: newFakeCore(), Expiry: time.Second, Heartbeat: time.Second}); err == nil {
		t.Fatal("a server without auth was built")
	}
}
