package sshgw

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// HostKeyFile is the gateway's host key in the data directory.
const HostKeyFile = "ssh_host_ed25519_key"

// Info is what clients learn about the gateway (GET /api/v1/ssh): where to
// reach it and the host key to pin.
type Info struct {
	// Address is host:port as users reach the gateway. Its host is empty
	// when the gateway listens on every interface and no public address
	// is configured: clients use the host they reach the API at.
	Address string
	// HostKey is the host's public key in authorized_keys form
	// ("ssh-ed25519 AAAA…"), for a known_hosts line.
	HostKey string
	// Fingerprint is the host key's SHA256 fingerprint, as ssh prints it.
	Fingerprint string
}

// NewInfo describes a gateway reached at address with hostKey.
func NewInfo(address string, hostKey ssh.PublicKey) *Info {
	return &Info{Address: address, HostKey: AuthorizedKey(hostKey), Fingerprint: ssh.FingerprintSHA256(hostKey)}
}

// LoadHostKey reads the ed25519 host key at path (OpenSSH's private key
// format, as ssh-keygen writes it), making it on first use with mode 0600.
func LoadHostKey(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := writeHostKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("ssh host key: %w", err)
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("ssh host key %s: %w", path, err)
	}
	return signer, nil
}

// writeHostKey makes a new ed25519 key at path; an existing file is
// fs.ErrExist (another process made it first).
func writeHostKey(path string) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := ssh.MarshalPrivateKey(priv, "paddock ssh gateway")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// AuthorizedKey is k in authorized_keys form without a comment or a
// newline: "<type> <base64>".
func AuthorizedKey(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// maxPublicKeyLen bounds a public key as given: a 16384-bit RSA key in
// authorized_keys form with a comment fits.
const maxPublicKeyLen = 16 << 10

// ParsePublicKey reads one public key in authorized_keys form ("ssh-ed25519
// AAAA… comment", as id_ed25519.pub holds it) and returns it normalized
// (without options or comment) with its SHA256 fingerprint and the comment.
// Certificates and keys with options are refused: a key stands for itself.
func ParsePublicKey(line string) (normalized, fingerprint, comment string, err error) {
	bad := func(format string, args ...any) error {
		return errdefs.InvalidArgument("invalid_public_key", format, args...)
	}
	line = strings.TrimSpace(line)
	if line == "" || len(line) > maxPublicKeyLen {
		return "", "", "", bad("give one public key in authorized_keys form, such as the line in ~/.ssh/id_ed25519.pub")
	}
	if strings.ContainsAny(line, "\r\n") {
		return "", "", "", bad("give one public key, on one line")
	}
	k, comment, options, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	switch {
	case err != nil:
		return "", "", "", bad("not a public key in authorized_keys form (%q…)", truncate(line, 24))
	case len(options) > 0 || len(rest) > 0:
		return "", "", "", bad("give the key alone, without authorized_keys options")
	}
	if _, ok := k.(*ssh.Certificate); ok {
		return "", "", "", bad("certificates are not accepted; give the public key itself")
	}
	return AuthorizedKey(k), ssh.FingerprintSHA256(k), comment, nil
}

// truncate cuts s to n bytes at most, for messages and logs.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
