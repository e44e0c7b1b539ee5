package agentauth_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
)

func mustKey(t *testing.T) []byte {
	t.Helper()
	k, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// serve runs a Listener with key on a fresh unix socket and echoes one
// line on every verified connection.
func serve(t *testing.T, key []byte) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "a.sock")
	inner, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l := agentauth.NewListener(inner, key, nil)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 5)
				if _, err := c.Read(b); err == nil {
					_, _ = c.Write(b)
				}
			}()
		}
	}()
	return sock
}

func TestHandshake(t *testing.T) {
	key := mustKey(t)
	sock := serve(t, key)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	t.Run("the right key", func(t *testing.T) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := agentauth.Verify(ctx, c, key); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 5)
		if _, err := c.Read(b); err != nil || string(b) != "hello" {
			t.Fatalf("after the handshake: %q, %v", b, err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := agentauth.Verify(ctx, c, mustKey(t)); !errors.Is(err, agentauth.ErrUnverified) {
			t.Fatalf("Verify with another key = %v; want ErrUnverified", err)
		}
	})
	t.Run("a client without the handshake gets nothing", func(t *testing.T) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// An HTTP/2 preface is not a challenge: the listener drops it.
		_, _ = c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n!!!!!!!!!!!!"))
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, err := c.Read(make([]byte, 64)); err == nil {
			t.Fatalf("read %d bytes from an unverified connection", n)
		}
	})
	t.Run("a peer that never answers", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go func() { _, _ = b.Read(make([]byte, 64)) }()
		sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if err := agentauth.Verify(sctx, a, key); !errors.Is(err, agentauth.ErrUnverified) {
			t.Fatalf("Verify against a silent peer = %v", err)
		}
	})
}

func TestKeyFile(t *testing.T) {
	key := mustKey(t)
	p := filepath.Join(t.TempDir(), agentauth.KeyFileName)
	if err := agentauth.WriteKeyFile(p, key); err != nil {
		t.Fatal(err)
	}
	if err := agentauth.WriteKeyFile(p, key); err == nil {
		t.Fatal("WriteKeyFile overwrote an existing file")
	}
	got, err := agentauth.TakeKeyFile(p)
	if err != nil || string(got) != string(key) {
		t.Fatalf("TakeKeyFile = %x, %v", got, err)
	}
	if _, err := agentauth.TakeKeyFile(p); err == nil {
		t.Fatal("the key file was still there after TakeKeyFile")
	}
}
