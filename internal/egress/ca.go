package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Files of the installation's egress CA in its directory.
const (
	caCertFile = "egress-ca.pem"
	caKeyFile  = "egress-ca-key.pem"
)

// CA is the installation's own certificate authority: sandboxes trust it,
// and the proxy signs with it the certificates it shows for hosts it
// brokers secrets to.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// CertPEM is the CA's certificate, to be trusted inside sandboxes.
func (ca *CA) CertPEM() []byte { return ca.certPEM }

// LoadOrCreateCA reads the CA from dir, creating it on first use (the key
// 0600, the directory 0700).
func LoadOrCreateCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, os.ErrNotExist) {
		if err := createCA(dir, certPath, keyPath); err != nil {
			return nil, err
		}
		certPEM, err = os.ReadFile(certPath)
	}
	if err != nil {
		return nil, fmt.Errorf("egress CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("egress CA: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("egress CA %s: %w", certPath, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("egress CA %s: the key is not ECDSA", keyPath)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("egress CA %s: %w", certPath, err)
	}
	return &CA{cert: cert, key: key, certPEM: certPEM}, nil
}

func createCA(dir, certPath, keyPath string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("egress CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "paddock egress CA", Organization: []string{"paddock"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	// The key first: a certificate without its key would be unusable.
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeNew(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// writeNew writes a file through a temporary one and a rename.
func writeNew(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("egress CA: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("egress CA: %w", err)
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// leafCache mints and keeps the certificates the proxy shows per host. All
// share one key, made when the cache is.
type leafCache struct {
	ca  *CA
	key *ecdsa.PrivateKey

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

// maxLeaves bounds the cache; when full it starts over.
const maxLeaves = 1024

// leafLifetime is how long a minted certificate is valid; it is minted
// again a day before it ends.
const leafLifetime = 7 * 24 * time.Hour

func newLeafCache(ca *CA) *leafCache {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic("egress: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return &leafCache{ca: ca, key: key, certs: map[string]*tls.Certificate{}}
}

func (c *leafCache) get(host string) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cert, ok := c.certs[host]; ok && time.Until(cert.Leaf.NotAfter) > 24*time.Hour {
		return cert, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca.cert, &c.key.PublicKey, c.ca.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	cert := &tls.Certificate{Certificate: [][]byte{der, c.ca.cert.Raw}, PrivateKey: c.key, Leaf: leaf}
	if len(c.certs) >= maxLeaves {
		c.certs = map[string]*tls.Certificate{}
	}
	c.certs[host] = cert
	return cert, nil
}
