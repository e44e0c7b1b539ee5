package agentconn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// serveTCP opens a listener on 127.0.0.1 and runs serve on each of its
// connections, closing it when serve returns; the listener and the
// connections still open are closed, and their goroutines joined, when the
// test ends.
func serveTCP(t *testing.T, serve func(c *net.TCPConn)) int {
	t.Helper()
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *net.TCPConn)
	go func() {
		defer close(conns)
		for {
			c, err := l.AcceptTCP()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var open []*net.TCPConn
		finished := make(chan struct{})
		for c := range conns {
			open = append(open, c)
			go func() {
				serve(c)
				c.Close()
				finished <- struct{}{}
			}()
		}
		for _, c := range open {
			c.Close()
		}
		for range open {
			<-finished
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().(*net.TCPAddr).Port
}

// echo writes back what it reads until end-of-file.
func echo(c *net.TCPConn) {
	buf := make([]byte, 8192) // not io.Copy(c, c), which splices a socket into itself
	for {
		n, err := c.Read(buf)
		if _, werr := c.Write(buf[:n]); err != nil || werr != nil {
			return
		}
	}
}

// freePort returns a port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func wantTimeout(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("got %v, want a timeout", err)
	}
}

// httpVia returns an HTTP client whose every connection is DialPort(port).
func httpVia(t *testing.T, c *agentconn.Client, port int) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return c.DialPort(ctx, port)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestDialPort forwards connections to listeners the test opens, through
// an in-process agent.
func TestDialPort(t *testing.T) {
	a := startAgent(t, shim.Options{})
	c := a.client
	ctx := ctxT(t)

	t.Run("echo 1 MiB with half-close", func(t *testing.T) {
		conn, err := c.DialPort(ctx, serveTCP(t, echo))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if got := conn.RemoteAddr().String(); !strings.HasPrefix(got, "127.0.0.1:") {
			t.Errorf("remote address %s", got)
		}
		data := make([]byte, 1<<20)
		rand.Read(data)
		written := make(chan error, 1)
		go func() {
			_, err := conn.Write(data)
			if err == nil {
				err = conn.(interface{ CloseWrite() error }).CloseWrite()
			}
			written <- err
		}()
		got, err := io.ReadAll(conn)
		if werr := <-written; werr != nil {
			t.Fatalf("write: %v", werr)
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, %v", len(got), err)
		}
		if _, err := conn.Write([]byte("x")); err == nil {
			t.Fatal("a write after CloseWrite succeeded")
		}
	})

	t.Run("sandbox side closes first", func(t *testing.T) {
		conn, err := c.DialPort(ctx, serveTCP(t, func(c *net.TCPConn) { c.Write([]byte("bye")) }))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if got, err := io.ReadAll(conn); err != nil || string(got) != "bye" {
			t.Fatalf("read %q, %v", got, err)
		}
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("read after the end: %v", err)
		}
		// As on a TCP socket whose peer has closed: a half-close succeeds,
		// a write fails.
		if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatalf("CloseWrite: %v", err)
		}
		if _, err := conn.Write([]byte("x")); err == nil {
			t.Fatal("a write after the end succeeded")
		}
		conn.Close()
		if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read after Close: %v", err)
		}
	})

	t.Run("HTTP", func(t *testing.T) {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s", r.URL.Path)
		})}
		served := make(chan error, 1)
		go func() { served <- hs.Serve(l) }()
		defer func() {
			hs.Close()
			<-served
		}()
		hc := httpVia(t, c, l.Addr().(*net.TCPAddr).Port)
		for _, path := range []string{"/a", "/b"} { // the second reuses the connection
			res, err := hc.Get("http://sandbox" + path)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 || string(body) != "hello "+path {
				t.Fatalf("GET %s: %d %q %v", path, res.StatusCode, body, err)
			}
		}
	})

	t.Run("the dial's context does not bound the connection", func(t *testing.T) {
		dctx, cancel := context.WithCancel(ctx)
		conn, err := c.DialPort(dctx, serveTCP(t, echo))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte("still here")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "still here" {
			t.Fatalf("read %q, %v", buf, err)
		}
	})

	t.Run("read deadline", func(t *testing.T) {
		say := make(chan string)
		conn, err := c.DialPort(ctx, serveTCP(t, func(c *net.TCPConn) {
			for s := range say {
				c.Write([]byte(s))
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		defer close(say)
		buf := make([]byte, 16)
		// A deadline set while a read waits ends it.
		read := make(chan error, 1)
		go func() {
			_, err := conn.Read(buf)
			read <- err
		}()
		if err := conn.SetReadDeadline(time.Now()); err != nil {
			t.Fatal(err)
		}
		wantTimeout(t, <-read)
		// So does one that passes while it waits.
		conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err = conn.Read(buf)
		wantTimeout(t, err)
		// Without a deadline the connection reads on.
		conn.SetDeadline(time.Time{})
		say <- "late"
		if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "late" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
	})

	t.Run("write deadline ends a blocked write", func(t *testing.T) {
		// The sandbox side never reads: writes block once every buffer
		// between is full.
		hold := make(chan struct{})
		defer close(hold)
		conn, err := c.DialPort(ctx, serveTCP(t, func(*net.TCPConn) { <-hold }))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetWriteDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := conn.Write(make([]byte, 64<<20))
		wantTimeout(t, err)
		if n >= 64<<20 {
			t.Fatalf("wrote all %d bytes", n)
		}
		// The connection is broken off.
		_, err = conn.Read(make([]byte, 1))
		wantTimeout(t, err)
	})

	t.Run("close ends a blocked read and write", func(t *testing.T) {
		hold := make(chan struct{})
		defer close(hold)
		conn, err := c.DialPort(ctx, serveTCP(t, func(*net.TCPConn) { <-hold }))
		if err != nil {
			t.Fatal(err)
		}
		read, wrote := make(chan error, 1), make(chan error, 1)
		go func() {
			_, err := conn.Read(make([]byte, 1))
			read <- err
		}()
		go func() {
			_, err := conn.Write(make([]byte, 64<<20))
			wrote <- err
		}()
		conn.Close()
		if err := <-read; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read: %v", err)
		}
		if err := <-wrote; err == nil {
			t.Fatal("write: no error")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := c.DialPort(ctx, freePort(t))
		wantCode(t, err, errdefs.ErrUnavailable, "port_not_listening")
		for _, port := range []int{0, -1, 65536} {
			_, err := c.DialPort(ctx, port)
			wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_port")
		}
		dctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.DialPort(dctx, freePort(t)); !errors.Is(err, context.Canceled) {
			t.Fatalf("dial with a cancelled context: %v", err)
		}
	})

	t.Run("list", func(t *testing.T) {
		port := serveTCP(t, func(*net.TCPConn) {})
		ports, err := c.ListPorts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p.Port == port && p.Address == "127.0.0.1" {
				if p.PID != os.Getpid() {
					t.Fatalf("port %d listed with pid %d, want %d", port, p.PID, os.Getpid())
				}
				return
			}
		}
		t.Fatalf("port %d not in %+v", port, ports)
	})
}

// TestDockerPorts reaches a web server inside a sandbox that has no
// network (network mode none) through the agent: on runc and gVisor.
func TestDockerPorts(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) { testDockerPorts(t, rt.runtime) })
	}
}

func testDockerPorts(t *testing.T, runtime string) { testPorts(t, startSandbox(t, runtime)) }

// TestKubernetesPorts reaches a web server inside a Pod of the test
// cluster whose network mode is none, through its agent.
func TestKubernetesPorts(t *testing.T) { testPorts(t, startKubeSandbox(t)) }

// testPorts reaches a web server in sb through its agent.
func testPorts(t *testing.T, sb *sandbox) {
	c := sb.client
	ctx := ctxT(t)

	const page = "hello from a sandbox without network\n"
	if _, err := c.WriteFile(ctx, "/workspace/www/index.html", strings.NewReader(page), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.DialPort(ctx, 8080)
	wantCode(t, err, errdefs.ErrUnavailable, "port_not_listening")

	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"httpd", "-f", "-p", "8080", "-h", "/workspace/www"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	es.Close()
	// The server listens once it has started; the agent tells when.
	var listener *agentconn.ListeningPort
	testenv.Eventually(t, func() error {
		ports, err := c.ListPorts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p.Port == 8080 {
				listener = &p
				return nil
			}
		}
		return fmt.Errorf("port 8080 not listed: %+v", ports)
	})
	t.Logf("listed %+v", *listener)
	if listener.PID != es.PID() || listener.Command != "httpd" {
		t.Errorf("listener %+v, want pid %d command httpd", *listener, es.PID())
	}

	hc := httpVia(t, c, 8080)
	for range 2 {
		res, err := hc.Get("http://sandbox:8080/index.html")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || string(body) != page {
			t.Fatalf("GET: %d %q %v", res.StatusCode, body, err)
		}
	}
	if _, err := c.DialPort(ctx, 8081); err == nil {
		t.Fatal("dialled a port nothing listens on")
	} else {
		wantCode(t, err, errdefs.ErrUnavailable, "port_not_listening")
	}
}
