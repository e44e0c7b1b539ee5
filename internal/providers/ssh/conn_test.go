package ssh_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/providers/ssh"
)

// TestLinkLostOpeningAChannel: a link that ends while a session is being
// opened on it is the machine being unavailable, whatever x/crypto/ssh
// answers the open with ("unexpected packet … <nil>" when the connection
// is torn down before its Wait returns). The server here accepts every
// login and hangs up on every channel open, so both tries lose the link.
func TestLinkLostOpeningAChannel(t *testing.T) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := xssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	srv := &xssh.ServerConfig{NoClientAuth: true}
	srv.AddHostKey(hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				_, chans, reqs, err := xssh.NewServerConn(nc, srv)
				if err != nil {
					return
				}
				go xssh.DiscardRequests(reqs)
				<-chans // the first open: hang up instead of answering
			}()
		}
	}()

	cfg := &xssh.ClientConfig{
		User:            "root",
		HostKeyCallback: xssh.FixedHostKey(hostKey.PublicKey()),
		Timeout:         30 * time.Second,
	}
	c := ssh.NewConn(ln.Addr().String(), cfg, hostKey, 0, nil)
	defer c.Close()
	_, err = c.Run(t.Context(), nil, "true")
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("run over a link lost at every channel open = %v, want unavailable", err)
	}
	var pub *errdefs.Error
	if !errors.As(err, &pub) || pub.Code != ssh.CodeUnreachable {
		t.Fatalf("run = %v, want code %s", err, ssh.CodeUnreachable)
	}
	_, err = c.DialUnix(t.Context(), "/run/agent.sock")
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("dial over a link lost at every channel open = %v, want unavailable", err)
	}
}
