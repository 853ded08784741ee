package labhttp

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// TestCAIssues: a server certificate verifies against the CA (its PEM,
// as a trust store reads it) for its names only, and only as a server's;
// a certificate without a name is refused.
func TestCAIssues(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("grafana.com")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(ca.PEM)
	if block == nil {
		t.Fatal("the CA's PEM holds no certificate")
	}
	root, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "grafana.com"}); err != nil {
		t.Errorf("grafana.com: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "github.com"}); err == nil {
		t.Error("github.com: verified")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "grafana.com", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("as a client's certificate: verified")
	}
	other, _ := NewCA()
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: other.Pool(), DNSName: "grafana.com"}); err == nil {
		t.Error("another lab's CA: verified")
	}
	if _, err := ca.Issue(); err == nil {
		t.Error("a certificate without a name was issued")
	}
}
