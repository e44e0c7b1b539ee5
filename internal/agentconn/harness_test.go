package agentconn_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { testenv.RemoveBinaries() }))
}

// agent is a shim served in-process on a unix socket, and a client of it.
type agent struct {
	client *agentconn.Client
	socket string
	stop   func()
}

// startAgent runs a shim server (with the process's reaper) for the test.
// Tests that use it must not run in parallel: a process has one reaper.
func startAgent(t testing.TB, opts shim.Options) *agent {
	t.Helper()
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	stopServer := shimtest.StartAt(t, sock, opts)
	c := agentconn.New(testenv.UnixDialer(sock))
	stopped := false
	a := &agent{client: c, socket: sock}
	a.stop = func() {
		if stopped {
			return
		}
		stopped = true
		c.Close()
		stopServer()
	}
	t.Cleanup(a.stop)
	return a
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantCode checks that err is a public error with the given kind and code.
func wantCode(t *testing.T, err error, kind error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	pub, ok := errdefs.Public(err)
	if !ok {
		t.Fatalf("error %v is not public, want %s", err, code)
	}
	if !errors.Is(err, kind) || pub.Code != code {
		t.Fatalf("got %v (kind %v, code %q), want kind %v code %q", err, errdefs.KindOf(err), pub.Code, kind, code)
	}
}
