package shim

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInstallTrust: the bundle holds the CA after the image's roots, and
// every variable TLS clients read points at it; a file that is not a
// certificate is refused.
func TestInstallTrust(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "t"}, NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "trust.pem")
	pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(ca, pemCA, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(trustEnv, "NODE_EXTRA_CA_CERTS") {
		t.Setenv(k, "")
	}
	if err := installTrust(ca, dir); err != nil {
		t.Fatal(err)
	}
	bundle, err := os.ReadFile(filepath.Join(dir, BundleName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(bundle, pemCA) {
		t.Fatal("the bundle does not end with the CA")
	}
	for _, k := range trustEnv {
		if os.Getenv(k) != filepath.Join(dir, BundleName) {
			t.Errorf("%s = %q", k, os.Getenv(k))
		}
	}
	if os.Getenv("NODE_EXTRA_CA_CERTS") != ca {
		t.Errorf("NODE_EXTRA_CA_CERTS = %q", os.Getenv("NODE_EXTRA_CA_CERTS"))
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := installTrust(bad, t.TempDir()); err == nil {
		t.Fatal("a file without a certificate was trusted")
	}
}
