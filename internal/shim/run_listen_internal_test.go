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
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/testenv"
)

// writeCA writes a self-signed CA certificate (PEM) to path.
func writeCA(t testing.TB, path string) {
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
func writeKeyFile(t testing.TB, dir string) (string, []byte) {
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

// bothAgent is Run serving on a unix socket and a TCP address.
type bothAgent struct {
	sock, sockDir, runDir, addr string
	key                         []byte
	overTLS, overSocket         *http.Client
	stop                        func() error // ends Run and returns its error
}

// runBoth runs the agent on a socket and a free loopback port with a key,
// a run directory of its own and a CA to trust, until the test ends.
func runBoth(t testing.TB) *bothAgent {
	for _, k := range append(trustEnv, "NODE_EXTRA_CA_CERTS") {
		t.Setenv(k, "")
	}
	a := &bothAgent{sockDir: testenv.ShortTempDir(t), runDir: t.TempDir()}
	a.sock = filepath.Join(a.sockDir, "agent.sock")
	keyFile, key := writeKeyFile(t, t.TempDir())
	a.key = key
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeCA(t, ca)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, RunOptions{Logger: slog.New(slog.DiscardHandler), Socket: a.sock, Listen: a.addr,
			KeyFile: keyFile, RunDir: a.runDir, TrustFile: ca, Grace: time.Second})
	}()
	var once sync.Once
	var runErr error
	a.stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-ran
		})
		return runErr
	}
	t.Cleanup(func() { _ = a.stop() })
	a.overTLS = h2Over(func(ctx context.Context) (net.Conn, error) { return agentauth.DialTLS(ctx, a.addr, key) })
	a.overSocket = h2Over(a.dialSocket)
	t.Cleanup(a.overTLS.CloseIdleConnections)
	t.Cleanup(a.overSocket.CloseIdleConnections)
	return a
}

// dialSocket connects to the agent's socket and proves the key.
func (a *bothAgent) dialSocket(ctx context.Context) (net.Conn, error) {
	c, err := testenv.UnixDialer(a.sock)(ctx)
	if err == nil {
		if err = agentauth.Verify(ctx, c, a.key); err != nil {
			c.Close()
		}
	}
	return c, err
}

// healthz asks for the agent's /healthz through hc.
func healthz(hc *http.Client) error {
	res, err := hc.Get("http://agent/healthz")
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
		return fmt.Errorf("healthz %s over %s", res.Status, res.Proto)
	}
	return nil
}

// TestRunServesSocketAndTCP: with a socket and a TCP address the agent
// serves the protocol on both, the TCP one inside TLS pinned to its key
// (another key cannot finish it), and writes the trust bundle to its run
// directory, not the socket's.
func TestRunServesSocketAndTCP(t *testing.T) {
	a := runBoth(t)
	for name, hc := range map[string]*http.Client{"tcp": a.overTLS, "socket": a.overSocket} {
		testenv.Eventually(t, func() error { return healthz(hc) })
		if err := healthz(hc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := agentauth.DialTLS(t.Context(), a.addr, mustNewKey(t)); !errors.Is(err, agentauth.ErrUnverified) {
		t.Errorf("another key over TCP: %v, want ErrUnverified", err)
	}
	if _, err := os.Stat(filepath.Join(a.runDir, BundleName)); err != nil {
		t.Errorf("no bundle in the run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.sockDir, BundleName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bundle beside the socket: %v", err)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.sock); !errors.Is(err, os.ErrNotExist) {
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

// BenchmarkLink compares the agent link on a unix socket with the one
// over TCP inside pinned TLS (loopback): a call on an open connection
// (GET /healthz over HTTP/2), and a new connection (dial, TLS for TCP, and
// the key handshake).
func BenchmarkLink(b *testing.B) {
	a := runBoth(b)
	testenv.Eventually(b, func() error { return healthz(a.overTLS) })
	tlsDial := func(ctx context.Context) (net.Conn, error) { return agentauth.DialTLS(ctx, a.addr, a.key) }
	for _, l := range []struct {
		name string
		hc   *http.Client
		dial func(context.Context) (net.Conn, error)
	}{{"unix", a.overSocket, a.dialSocket}, {"tls", a.overTLS, tlsDial}} {
		b.Run(l.name+"/call", func(b *testing.B) {
			testenv.BenchLatency(b, func() error { return healthz(l.hc) })
		})
		b.Run(l.name+"/connect", func(b *testing.B) {
			testenv.BenchLatency(b, func() error {
				c, err := l.dial(context.Background())
				if err == nil {
					c.Close()
				}
				return err
			})
		})
	}
}
