package shim

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// systemBundles are where images keep their CA bundle: Debian and Ubuntu,
// Fedora and RHEL, Alpine, openSUSE.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/cert.pem",
	"/etc/ssl/ca-bundle.pem",
}

// BundleName is the CA bundle the shim writes to its run directory (by
// default its socket's; see RunOptions.RunDir) when it is given a CA to
// trust: the image's roots and that CA.
const BundleName = "ca-certificates.crt"

// trustEnv are the variables that point TLS clients at a CA bundle:
// OpenSSL and Go (SSL_CERT_FILE), Python's requests, curl, git and pip.
// Node adds NODE_EXTRA_CA_CERTS to its own roots, so it gets the CA alone.
var trustEnv = []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT"}

// installTrust makes every process the shim starts trust the CA in
// caFile beside the image's roots: it writes the image's bundle and the CA
// to dir/ca-certificates.crt and sets the variables TLS clients read in the
// shim's own environment, which every process inherits.
func installTrust(caFile, dir string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	if b, _ := pem.Decode(ca); b == nil || b.Type != "CERTIFICATE" {
		return errors.New("trust: the CA file holds no PEM certificate")
	} else if _, err := x509.ParseCertificate(b.Bytes); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	var bundle bytes.Buffer
	for _, p := range systemBundles {
		if b, err := os.ReadFile(p); err == nil {
			bundle.Write(b)
			if len(b) > 0 && b[len(b)-1] != '\n' {
				bundle.WriteByte('\n')
			}
			break
		}
	}
	bundle.Write(ca)
	out := filepath.Join(dir, BundleName)
	if err := os.WriteFile(out, bundle.Bytes(), 0o444); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	for _, k := range trustEnv {
		if err := os.Setenv(k, out); err != nil {
			return err
		}
	}
	return os.Setenv("NODE_EXTRA_CA_CERTS", caFile)
}
