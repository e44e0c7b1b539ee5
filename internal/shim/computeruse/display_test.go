package computeruse

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
)

// fakeX listens as display n in a socket directory of the test's and
// answers every connection setup with status.
func fakeX(t *testing.T, n int, status byte) {
	t.Helper()
	fakeXWith(t, n, func() byte { return status })
}

// fakeXWith is fakeX answering each setup with what status says then.
func fakeXWith(t *testing.T, n int, status func() byte) {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(x11SocketDir, "X"+strconv.Itoa(n)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			var setup [12]byte
			if _, err := io.ReadFull(c, setup[:]); err == nil && setup[0] == 'l' && setup[2] == 11 {
				c.Write([]byte{status(), 0, 11, 0, 0, 0, 0, 0})
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
}

func withSocketDir(t *testing.T) {
	old := x11SocketDir
	// Unix socket paths are short: not t.TempDir's.
	d, err := os.MkdirTemp("", "x11")
	if err != nil {
		t.Fatal(err)
	}
	x11SocketDir = d
	t.Cleanup(func() { x11SocketDir = old; os.RemoveAll(d) })
}

func TestDisplayAnswers(t *testing.T) {
	withSocketDir(t)
	fakeX(t, 1, 1)
	fakeX(t, 2, 0) // refuses the connection
	if !DisplayAnswers(t.Context(), 1) {
		t.Error("a display that accepts the setup does not answer")
	}
	if DisplayAnswers(t.Context(), 2) {
		t.Error("a display that refuses the setup answers")
	}
	if DisplayAnswers(t.Context(), 3) {
		t.Error("a display without a socket answers")
	}
	exited := make(chan struct{})
	close(exited)
	if err := waitDisplay(t.Context(), 3, exited, time.Second); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("waiting on a server that exited: %v", err)
	}
	if err := waitDisplay(t.Context(), 3, nil, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("waiting on a display that never answers: %v", err)
	}
	if err := waitDisplay(t.Context(), 1, nil, time.Second); err != nil {
		t.Errorf("waiting on a display that answers: %v", err)
	}
}

// TestWaitDisplaySlow: serve waits out a display that takes longer than
// the 15 s it once allowed (a loaded CI machine's Xvfb did), and gives up
// on one that never answers only at displayReadyTimeout.
func TestWaitDisplaySlow(t *testing.T) {
	withSocketDir(t)
	var up atomic.Bool
	fakeXWith(t, 1, func() byte {
		if up.Load() {
			return 1
		}
		return 0
	})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		go func() {
			time.Sleep(20 * time.Second)
			up.Store(true)
		}()
		if err := waitDisplay(t.Context(), 1, nil, displayReadyTimeout); err != nil {
			t.Fatalf("a display that answers after 20 s: %v", err)
		}
		if d := time.Since(start); d < 20*time.Second {
			t.Fatalf("answered after %v, before the display did", d)
		}
		start = time.Now()
		if err := waitDisplay(t.Context(), 2, nil, displayReadyTimeout); err == nil {
			t.Fatal("a display that never answers answered")
		}
		if d := time.Since(start); d < displayReadyTimeout {
			t.Fatalf("gave up on a display after %v, before displayReadyTimeout", d)
		}
	})
}

// TestSuperviseBrowser: a browser that exits is started again, and stop
// ends the browser and the display server.
func TestSuperviseBrowser(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	x, err := startChild("sleep", []string{"60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{
		log: testLogger(t), xvfb: x, profile: dir,
		browser:     []string{"sh", "-c", `echo started >> "$0"; [ "$(wc -l < "$0")" -ge 3 ] && exec sleep 60; exit 1`, starts},
		stopBrowser: make(chan struct{}), browserDone: make(chan struct{}),
	}
	go s.superviseBrowser([]time.Duration{10 * time.Millisecond})
	testenv.Eventually(t, func() error {
		b, _ := os.ReadFile(starts)
		if n := strings.Count(string(b), "started"); n < 3 {
			return fmt.Errorf("the browser was started %d times", n)
		}
		return nil
	})
	s.stop()
	select {
	case <-s.Done():
	default:
		t.Fatal("the display server runs after stop")
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "started"); n != 3 {
		t.Fatalf("the browser was started %d times, want 3 (it stayed up the third time)", n)
	}
}
