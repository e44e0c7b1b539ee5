// Package shimtest serves a real agent (paddock-shim's server) in the
// test's own process, on the host, for tests of what stands in front of
// a sandbox's agent without Docker: its ports are the host's loopback.
package shimtest

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Serve runs an agent on a unix socket until the test ends and returns
// a dialer of it. Tests that use it must not run in parallel: a process
// has one reaper.
func Serve(t testing.TB) func(context.Context) (net.Conn, error) {
	t.Helper()
	return ServeWith(t, shim.Options{})
}

// ServeWith is Serve with opts (its Logger and Reaper are the test's).
func ServeWith(t testing.TB, opts shim.Options) func(context.Context) (net.Conn, error) {
	t.Helper()
	dial, _ := Start(t, opts)
	return dial
}

// Start is ServeWith that also returns stop, which stops the agent
// before the test ends (as a sandbox that goes away); the test's end
// calls it too.
func Start(t testing.TB, opts shim.Options) (dial func(context.Context) (net.Conn, error), stop func()) {
	t.Helper()
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	return testenv.UnixDialer(sock), StartAt(t, sock, opts)
}

// StartAt is Start on a unix socket at sock, which another agent may serve
// once this one stopped: a sandbox's agent started again.
func StartAt(t testing.TB, sock string, opts shim.Options) (stop func()) {
	t.Helper()
	srv, closeSrv := NewServer(t, opts)
	l, err := net.Listen("unix", sock)
	if err != nil {
		closeSrv()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("agent: %v", err)
			}
			closeSrv()
		})
	}
	t.Cleanup(stop)
	return stop
}

// NewServer returns an agent's server with opts, its Logger the test's and
// its Reaper one of its own, for a test that serves it itself. closeSrv
// closes both; the test's end calls it too.
func NewServer(t testing.TB, opts shim.Options) (srv *shim.Server, closeSrv func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := shim.StartReaper(log)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger, opts.Reaper = log, r
	srv, err = shim.NewServer(opts)
	if err != nil {
		r.Stop()
		t.Fatal(err)
	}
	var once sync.Once
	closeSrv = func() {
		once.Do(func() {
			srv.Close()
			r.Stop()
		})
	}
	t.Cleanup(closeSrv)
	return srv, closeSrv
}
