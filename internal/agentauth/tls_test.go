package agentauth_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentauth"
)

// tlsPair runs a TLS handshake over loopback TCP (buffered, unlike
// net.Pipe, so an alert never blocks on a peer that is writing) between a
// server with srv and a client with cli, and returns each end's error.
func tlsPair(t *testing.T, srv, cli *tls.Config) (serverErr, clientErr error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() {
		a, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer a.Close()
		_ = a.SetDeadline(time.Now().Add(30 * time.Second))
		s := tls.Server(a, srv)
		if err = s.HandshakeContext(context.Background()); err == nil {
			// What the client sends once through.
			_, err = io.ReadFull(s, make([]byte, 2))
		}
		done <- err
	}()
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_ = b.SetDeadline(time.Now().Add(30 * time.Second))
	c := tls.Client(b, cli)
	if clientErr = c.HandshakeContext(context.Background()); clientErr == nil {
		_, clientErr = c.Write([]byte("hi"))
	}
	serverErr = <-done
	if clientErr == nil && serverErr != nil {
		// TLS 1.3 finishes the client's handshake before the server
		// checks its certificate: the refusal comes with the next read.
		_, clientErr = c.Read(make([]byte, 1))
	}
	return serverErr, clientErr
}

// TestTLSPinnedBothWays: the control plane and the agent of one key get
// through; a control plane with another sandbox's key is refused by the
// agent, and an agent with another key by the control plane; an end that
// presents the same role as the other (a Pod posing as the control plane
// with the agent's own certificate) is refused.
func TestTLSPinnedBothWays(t *testing.T) {
	key, other := mustKey(t), mustKey(t)
	srv := func(k []byte) *tls.Config {
		c, err := agentauth.ServerTLSConfig(k)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cli := func(k []byte) *tls.Config {
		c, err := agentauth.ClientTLSConfig(k)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if se, ce := tlsPair(t, srv(key), cli(key)); se != nil || ce != nil {
		t.Fatalf("same key: server %v, client %v", se, ce)
	}
	// Another sandbox's control-plane certificate, from a client that
	// takes any agent: the agent refuses it.
	foreign := cli(other).Clone()
	foreign.VerifyPeerCertificate = nil
	if se, ce := tlsPair(t, srv(key), foreign); !errors.Is(se, agentauth.ErrUnverified) || ce == nil {
		t.Errorf("a control plane with another key: the agent said %v, the client %v; want ErrUnverified and a failure", se, ce)
	}
	if _, ce := tlsPair(t, srv(other), cli(key)); !errors.Is(ce, agentauth.ErrUnverified) {
		t.Errorf("an agent with another key: the control plane said %v, want ErrUnverified", ce)
	}
	// A client presenting the agent's own certificate.
	posing := srv(key).Clone()
	posing.ServerName = agentauth.TLSServerName
	posing.VerifyPeerCertificate = nil
	if se, _ := tlsPair(t, srv(key), posing); !errors.Is(se, agentauth.ErrUnverified) {
		t.Errorf("a client with the agent's certificate: the agent said %v, want ErrUnverified", se)
	}
	// No client certificate at all.
	bare := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
	if se, _ := tlsPair(t, srv(key), bare); se == nil {
		t.Error("a client without a certificate got through")
	}
	if _, err := agentauth.ServerTLSConfig([]byte("short")); err == nil {
		t.Error("a short key made a config")
	}
}

// listenTLS listens on loopback TCP for the agent of key, until the test
// ends, and returns the TCP listener and the agent's.
func listenTLS(t *testing.T, key []byte) (net.Listener, *agentauth.Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := agentauth.ListenTLS(inner, key, nil)
	if err != nil {
		inner.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return inner, l
}

// TestDialTLS: the control plane reaches the agent of its key over TCP
// and is served; with another sandbox's key it is refused
// (ErrUnverified), and so is a peer that skips TLS and sends the
// handshake in the clear.
func TestDialTLS(t *testing.T) {
	key := mustKey(t)
	inner, l := listenTLS(t, key)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := agentauth.DialTLS(ctx, inner.Addr().String(), key)
	if err != nil {
		t.Fatalf("DialTLS with the sandbox's key: %v", err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo: %q %v", got, err)
	}
	_ = c.Close()
	if _, err := agentauth.DialTLS(ctx, inner.Addr().String(), mustKey(t)); !errors.Is(err, agentauth.ErrUnverified) {
		t.Errorf("DialTLS with another key: %v, want ErrUnverified", err)
	}
	raw, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := agentauth.Verify(ctx, raw, key); err == nil {
		t.Error("the handshake in the clear, without TLS, got through")
	}
}

// TestDialTLSNetworkFailure: a link that breaks during TLS (a listener
// that closes each connection at once) fails the dial with the network's
// error, not ErrUnverified: nothing proved an impostor.
func TestDialTLSNetworkFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = agentauth.DialTLS(ctx, l.Addr().String(), mustKey(t))
	if err == nil || errors.Is(err, agentauth.ErrUnverified) {
		t.Fatalf("DialTLS to a link that breaks: %v, want a network error that is not ErrUnverified", err)
	}
}

// TestDialTLSFindsADeadLink: DialTLS's connection has the kernel end it
// when its quiet link dies without a word: keepalive probes at
// LinkKeepAlive's settings, as the socket reports them, and within a
// minute.
func TestDialTLSFindsADeadLink(t *testing.T) {
	key := mustKey(t)
	inner, l := listenTLS(t, key)
	go func() {
		// Accept finishes the handshake the dial waits for.
		if c, err := l.Accept(); err == nil {
			<-t.Context().Done()
			c.Close()
		}
	}()
	c, err := agentauth.DialTLS(t.Context(), inner.Addr().String(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*tls.Conn).NetConn().(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	ka := agentauth.LinkKeepAlive
	for _, o := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(ka.Idle.Seconds())},
		{"TCP_KEEPINTVL", unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(ka.Interval.Seconds())},
		{"TCP_KEEPCNT", unix.IPPROTO_TCP, unix.TCP_KEEPCNT, ka.Count},
	} {
		var got int
		var gerr error
		if err := raw.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), o.level, o.opt) }); err != nil || gerr != nil {
			t.Fatalf("%s: %v %v", o.name, err, gerr)
		}
		if got != o.want {
			t.Errorf("%s = %d, want %d", o.name, got, o.want)
		}
	}
	if d := ka.Idle + time.Duration(ka.Count)*ka.Interval; d > time.Minute {
		t.Errorf("a quiet dead link is found after %s: not within a minute", d)
	}
}
