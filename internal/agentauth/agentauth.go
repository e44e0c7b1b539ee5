// Package agentauth proves to the control plane that the agent answering on
// a sandbox's stream is the one it provisioned for that sandbox.
//
// Vocabulary:
//
//   - Key: a random per-sandbox secret. The provider creates it with the
//     sandbox, keeps it in the sandbox's recovery state, and hands it to the
//     agent once, before anything else runs in the sandbox (for Docker, a
//     file in the agent's run directory that the agent reads and deletes).
//   - Handshake: before any protocol byte, the control plane sends a fresh
//     nonce on the new stream and the agent answers with
//     HMAC-SHA256(key, context || nonce). A stream whose answer does not
//     verify is closed and reported; the control plane never sends a request
//     on it.
//
// The handshake runs on the raw byte stream, so it works over any stream a
// provider offers (a unix socket, an SSH channel, a serial port). This
// package imports only the standard library: the agent (paddock-shim)
// uses it too.
package agentauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// KeySize is the length of a key in bytes.
const KeySize = 32

// KeyFileName is the name of the file a provider writes the key to in the
// agent's run directory; the agent deletes it once read.
const KeyFileName = "agent.key"

// DefaultTimeout bounds a handshake whose context has no deadline.
const DefaultTimeout = 10 * time.Second

const (
	magic     = "PDKA1" // protocol and version, sent before the nonce
	nonceSize = 32
	macSize   = sha256.Size
	label     = "paddock agent handshake v1\x00"
)

// ErrUnverified is returned (wrapped) when the other end of a stream failed
// to prove it holds the key.
var ErrUnverified = errors.New("the agent did not prove its identity")

// NewKey returns a new random key.
func NewKey() ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("agentauth: new key: %w", err)
	}
	return k, nil
}

// EncodeKey and DecodeKey convert a key to and from hex, the form it takes
// in recovery state and key files.
func EncodeKey(k []byte) string { return hex.EncodeToString(k) }

// DecodeKey parses a hex key and checks its length.
func DecodeKey(s string) ([]byte, error) {
	k, err := hex.DecodeString(s)
	if err != nil || len(k) != KeySize {
		return nil, errors.New("agentauth: a key is 64 hex digits")
	}
	return k, nil
}

// WriteKeyFile writes k to path with mode 0600; the file must not exist.
func WriteKeyFile(path string, k []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(EncodeKey(k) + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// TakeKeyFile reads the key at path and deletes the file, so nothing that
// runs in the sandbox later can read it.
func TakeKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("agentauth: remove the key file: %w", err)
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return DecodeKey(string(b))
}

func mac(key, nonce []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write(nonce)
	return m.Sum(nil)
}

// Verify runs the control plane's side of the handshake on conn: it sends a
// fresh nonce and checks the answer against key. On error conn should be
// closed; the error wraps ErrUnverified when the answer was wrong or
// missing.
func Verify(ctx context.Context, conn net.Conn, key []byte) error {
	if len(key) != KeySize {
		return errors.New("agentauth: no key to verify the agent with")
	}
	defer deadline(ctx, conn)()
	challenge := make([]byte, len(magic)+nonceSize)
	copy(challenge, magic)
	nonce := challenge[len(magic):]
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("agentauth: nonce: %w", err)
	}
	if _, err := conn.Write(challenge); err != nil {
		return fmt.Errorf("%w: sending the challenge: %v", ErrUnverified, err)
	}
	answer := make([]byte, macSize)
	if _, err := io.ReadFull(conn, answer); err != nil {
		return fmt.Errorf("%w: no answer: %v", ErrUnverified, err)
	}
	if !hmac.Equal(answer, mac(key, nonce)) {
		return fmt.Errorf("%w: wrong answer", ErrUnverified)
	}
	return nil
}

// Answer runs the agent's side of the handshake on conn: it reads the
// challenge and answers it with key.
func Answer(ctx context.Context, conn net.Conn, key []byte) error {
	defer deadline(ctx, conn)()
	challenge := make([]byte, len(magic)+nonceSize)
	if _, err := io.ReadFull(conn, challenge); err != nil {
		return fmt.Errorf("agentauth: reading the challenge: %w", err)
	}
	if string(challenge[:len(magic)]) != magic {
		return errors.New("agentauth: not a handshake")
	}
	if _, err := conn.Write(mac(key, challenge[len(magic):])); err != nil {
		return fmt.Errorf("agentauth: answering: %w", err)
	}
	return nil
}

// deadline bounds the handshake by ctx (or DefaultTimeout) and returns the
// function that lifts the bound again.
func deadline(ctx context.Context, conn net.Conn) func() {
	d, ok := ctx.Deadline()
	if !ok || time.Until(d) > DefaultTimeout {
		d = time.Now().Add(DefaultTimeout)
	}
	_ = conn.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		_ = conn.SetDeadline(time.Time{})
	}
}
