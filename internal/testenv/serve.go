package testenv

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
)

// Served is a `paddock serve` a test started on the real Docker engine,
// as a user runs it: for tests that drive it from outside (a browser, an
// SDK in another language, an MCP client).
type Served struct {
	// URL is where it listens ("http://127.0.0.1:PORT").
	URL string
	// Key is the installation admin's key (PADDOCK_BOOTSTRAP_KEY).
	Key  string
	Logs *Buffer
}

// ServeOptions are what a test changes of Serve's server.
type ServeOptions struct {
	// Image is the default sandbox image (TestImage when "").
	Image string
	// Args are more flags for `paddock serve`; Env more of its
	// environment (NAME=value), after the test's own.
	Args []string
	Env  []string
}

// Serve builds the binaries (once per test binary), starts a server on a
// data directory of the test's, waits until it is ready (its start-up
// reconciliation done), and stops it and sweeps what it made in Docker
// when the test ends. The image must be built (RequireDocker).
func Serve(t *testing.T, o ServeOptions) *Served {
	t.Helper()
	if o.Image == "" {
		o.Image = TestImage
	}
	RequireDocker(t, o.Image)
	bin, shim := Binary(t, "paddock"), Binary(t, "paddock-shim")
	instance := Instance(t)
	t.Cleanup(func() { _ = Sweep(provider.LabelInstance, instance) })
	data := t.TempDir()
	t.Cleanup(func() { UnmountUnder(data) })
	key := NewAdminKey(t)
	args := append([]string{"serve",
		"--listen", "127.0.0.1:0",
		"--data-dir", data,
		"--run-dir", filepath.Join(ShortTempDir(t), "r"),
		"--shim-path", shim,
		"--default-image", o.Image,
		"--pull-images=false"}, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PADDOCK_BOOTSTRAP_KEY="+key, "PADDOCK_INSTANCE_ID="+instance,
		"PADDOCK_LOG_LEVEL=warn", "PADDOCK_EGRESS_DISABLED=true", "PADDOCK_SSH_LISTEN=off")
	cmd.Env = append(cmd.Env, o.Env...)
	s := &Served{Key: key, Logs: new(Buffer)}
	s.URL = StartServe(t, cmd, s.Logs)
	WaitReconciled(t, s.URL, s.Logs)
	return s
}

// StartServe runs cmd, a `paddock serve`, and returns the URL it prints
// once it listens; the process is killed (by its pid) and reaped when
// the test ends.
func StartServe(t *testing.T, cmd *exec.Cmd, logs *Buffer) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "paddock listening on "); ok {
				urls <- strings.Fields(rest)[0]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("paddock serve exited before it listened: %v\n%s", err, logs)
	case <-time.After(Patience):
		t.Fatalf("paddock serve did not listen within %v\n%s", Patience, logs)
	}
	return ""
}

// NewAdminKey is a fresh installation admin key for PADDOCK_BOOTSTRAP_KEY.
func NewAdminKey(t testing.TB) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "pdk_" + hex.EncodeToString(b)
}
