package shim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/testenv"
)

// writeCA writes a self-signed CA certificate (PEM) to path.
func writeCA(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "t"}, NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o444); err != nil {
		t.Fatal(err)
	}
}

// writeKeyFile writes a new agent key to a file of dir and returns both.
func writeKeyFile(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	key, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "agent.key")
	if err := os.WriteFile(p, []byte(agentauth.EncodeKey(key)), 0o400); err != nil {
		t.Fatal(err)
	}
	return p, key
}

// h2Over is an HTTP/2 client (prior knowledge) whose connections dial.
func h2Over(dial func(context.Context) (net.Conn, error)) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dial(ctx)
	}}}
}

// TestRunServesSocketAndTCP: with a socket and a TCP address the agent
// serves the protocol on both, the TCP one inside TLS pinned to its key
// (another key cannot finish it), and writes the trust bundle to its run
// directory, not the socket's.
func TestRunServesSocketAndTCP(t *testing.T) {
	for _, k := range append(trustEnv, "NODE_EXTRA_CA_CERTS") {
		t.Setenv(k, "")
	}
	sockDir, runDir := testenv.ShortTempDir(t), t.TempDir()
	sock := filepath.Join(sockDir, "agent.sock")
	keyFile, key := writeKeyFile(t, t.TempDir())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeCA(t, ca)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, RunOptions{Logger: slog.New(slog.DiscardHandler), Socket: sock, Listen: addr,
			KeyFile: keyFile, RunDir: runDir, TrustFile: ca, Grace: time.Second})
	}()
	overTLS := h2Over(func(ctx context.Context) (net.Conn, error) { return agentauth.DialTLS(ctx, addr, key) })
	overSocket := h2Over(func(ctx context.Context) (net.Conn, error) {
		c, err := testenv.UnixDialer(sock)(ctx)
		if err == nil {
			if err = agentauth.Verify(ctx, c, key); err != nil {
				c.Close()
			}
		}
		return c, err
	})
	for name, hc := range map[string]*http.Client{"tcp": overTLS, "socket": overSocket} {
		testenv.Eventually(t, func() error {
			res, err := hc.Get("http://agent/healthz")
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
				t.Fatalf("%s: healthz %s over %s", name, res.Status, res.Proto)
			}
			return nil
		})
		hc.CloseIdleConnections()
	}
	if _, err := agentauth.DialTLS(ctx, addr, mustNewKey(t)); !errors.Is(err, agentauth.ErrUnverified) {
		t.Errorf("another key over TCP: %v, want ErrUnverified", err)
	}
	if _, err := os.Stat(filepath.Join(runDir, BundleName)); err != nil {
		t.Errorf("no bundle in the run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sockDir, BundleName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bundle beside the socket: %v", err)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

func mustNewKey(t *testing.T) []byte {
	t.Helper()
	k, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRunRefusesOptions: TCP without a key, nothing to serve on, and
// trust with nowhere to write its bundle are errors before anything (the
// key file stays).
func TestRunRefusesOptions(t *testing.T) {
	keyFile, _ := writeKeyFile(t, t.TempDir())
	for _, c := range []struct {
		o    RunOptions
		want string
	}{
		{RunOptions{Listen: "127.0.0.1:0"}, "serving on TCP needs the agent key"},
		{RunOptions{}, "nothing to serve on"},
		{RunOptions{Listen: "127.0.0.1:0", KeyFile: keyFile, TrustFile: "/ca.pem"}, "no run directory"},
	} {
		c.o.Logger = slog.New(slog.DiscardHandler)
		if err := Run(context.Background(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := os.Stat(keyFile); err != nil {
		t.Errorf("the key file: %v", err)
	}
}
