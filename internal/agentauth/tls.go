package agentauth

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"time"
)

// An agent reached over a network (a Pod's port, not a unix socket in a
// directory only the control plane can open) speaks TLS 1.3 with both
// ends pinned. Each end's certificate is self-signed with an Ed25519 key
// derived from the sandbox's key, one for the agent and one for the
// control plane, so nothing but the key has to reach the sandbox: the
// agent accepts only the control plane's certificate and the control
// plane only the agent's. A Pod that reaches another's agent port cannot
// finish the handshake, and one that listens in is shown ciphertext. The
// agentauth handshake then runs inside TLS as on any other stream.

// TLSServerName is the name both ends put in the handshake; the
// certificates are pinned, so it names nothing a CA vouches for.
const TLSServerName = "paddock-agent"

// Roles of the derived keys.
const (
	roleAgent        = "paddock agent tls v1 agent\x00"
	roleControlPlane = "paddock agent tls v1 control plane\x00"
)

// derive returns the Ed25519 key of role for the sandbox key.
func derive(key []byte, role string) (ed25519.PrivateKey, error) {
	if len(key) != KeySize {
		return nil, errors.New("agentauth: a key is 32 bytes")
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(role))
	return ed25519.NewKeyFromSeed(m.Sum(nil)), nil
}

// certificate is a self-signed certificate for priv.
func certificate(priv ed25519.PrivateKey) (tls.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames:     []string{TLSServerName},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, priv.Public(), priv)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("agentauth: certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// pinned verifies that the peer presented exactly one certificate, for
// want's public key.
func pinned(want ed25519.PublicKey) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) != 1 {
			return fmt.Errorf("%w: the peer sent %d certificates, want 1", ErrUnverified, len(raw))
		}
		c, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnverified, err)
		}
		got, ok := c.PublicKey.(ed25519.PublicKey)
		if !ok || !bytes.Equal(got, want) {
			return fmt.Errorf("%w: the peer's certificate is not the sandbox's", ErrUnverified)
		}
		return nil
	}
}

// tlsConfig is the config of the end holding own's key that accepts only
// the peer's.
func tlsConfig(key []byte, own, peer string) (*tls.Config, error) {
	mine, err := derive(key, own)
	if err != nil {
		return nil, err
	}
	theirs, err := derive(key, peer)
	if err != nil {
		return nil, err
	}
	cert, err := certificate(mine)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ServerName:   TLSServerName,
		// The chain is checked by the pin alone: no CA vouches for
		// either end.
		InsecureSkipVerify: true,
		// A resumed session skips VerifyPeerCertificate: never resume.
		SessionTicketsDisabled: true,
		ClientAuth:             tls.RequireAnyClientCert,
		VerifyPeerCertificate:  pinned(theirs.Public().(ed25519.PublicKey)),
	}, nil
}

// ServerTLSConfig is the agent's TLS config for a sandbox's key: it
// presents the agent's certificate and requires the control plane's.
func ServerTLSConfig(key []byte) (*tls.Config, error) {
	return tlsConfig(key, roleAgent, roleControlPlane)
}

// ClientTLSConfig is the control plane's TLS config for a sandbox's key:
// it presents the control plane's certificate and accepts only the
// agent's.
func ClientTLSConfig(key []byte) (*tls.Config, error) {
	return tlsConfig(key, roleControlPlane, roleAgent)
}

// DialTLS opens a stream to the agent of key at addr over TCP: TLS with
// both ends pinned, then the handshake (Verify) inside it. The returned
// connection is ready for the agent protocol.
func DialTLS(ctx context.Context, addr string, key []byte) (net.Conn, error) {
	cfg, err := ClientTLSConfig(key)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{KeepAliveConfig: LinkKeepAlive}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, tlsFailure(err)
	}
	if err := Verify(ctx, conn, key); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// LinkKeepAlive is how DialTLS's connections find a quiet link that died
// without a word (a node gone, a partition): the kernel ends the
// connection once keepalive probes go unanswered for about 30 s. The
// agent client's HTTP/2 connection has pings to the same end; Exec's
// framed connections, dialed the same way, have none, and a quiet
// process's call would otherwise wait out Go's default (about
// 2.5 minutes). A link that dies with data unacknowledged is left to the
// kernel's retransmissions (about 15 minutes): TCP_USER_TIMEOUT would
// end it sooner, but on the kernels that apply it to zero-window probes
// it would also end a live upload whose agent stops reading for a while
// (a slow disk).
var LinkKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

// ListenTLS wraps l, a TCP listener, for the agent of key: each
// connection must finish TLS as the control plane (ServerTLSConfig) and
// then the handshake (NewListener) before Accept returns it.
func ListenTLS(l net.Listener, key []byte, log *slog.Logger) (*Listener, error) {
	cfg, err := ServerTLSConfig(key)
	if err != nil {
		return nil, err
	}
	return NewListener(tls.NewListener(l, cfg), key, log), nil
}

// tlsFailure is the error of a failed TLS handshake: unverified when a
// certificate was refused (the pin on this end, or the peer's alert that
// ours is bad), and otherwise the network's error as it is, so a reset or
// a timeout is not taken for an impostor.
func tlsFailure(err error) error {
	var alert tls.AlertError
	if errors.Is(err, ErrUnverified) || errors.As(err, &alert) && (alert == 42 || alert == 116) { // bad_certificate, certificate_required
		return fmt.Errorf("%w: TLS: %v", ErrUnverified, err)
	}
	return fmt.Errorf("agent link TLS: %w", err)
}
