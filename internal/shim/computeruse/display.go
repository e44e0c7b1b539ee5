package computeruse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DisplayNumber reads an X display name (":99", ":99.0") to its number.
func DisplayNumber(display string) (int, error) {
	rest, ok := strings.CutPrefix(display, ":")
	if !ok {
		return 0, fmt.Errorf("display %q: want a local display such as :99", display)
	}
	rest, _, _ = strings.Cut(rest, ".")
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 65535-6000 {
		return 0, fmt.Errorf("display %q: want a local display such as :99", display)
	}
	return n, nil
}

// x11SocketDir is where X servers put their unix sockets.
var x11SocketDir = "/tmp/.X11-unix"

// DisplayAnswers reports whether an X server accepts a connection on the
// local display n: it connects to its unix socket and completes the X11
// connection setup (no authorization, as Xvfb grants local clients).
func DisplayAnswers(ctx context.Context, n int) bool {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "unix", fmt.Sprintf("%s/X%d", x11SocketDir, n))
	if err != nil {
		return false
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Setup request: little-endian ('l'), protocol 11.0, no authorization.
	if _, err := conn.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		return false
	}
	// The reply's first byte: 1 success, 0 failed, 2 authenticate.
	var reply [8]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return false
	}
	return reply[0] == 1
}

// waitDisplay waits until display n answers, the server exits (exited is
// closed) or ctx ends.
func waitDisplay(ctx context.Context, n int, exited <-chan struct{}, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if DisplayAnswers(ctx, n) {
			return nil
		}
		select {
		case <-exited:
			return errors.New("Xvfb exited before the display answered")
		case <-ctx.Done():
			return fmt.Errorf("display :%d did not answer within %s", n, timeout)
		case <-tick.C:
		}
	}
}

// tail keeps the last bytes written to it: a child's output, logged when
// it fails.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String is the kept output, less Chromium's complaints that the sandbox
// has no D-Bus (every line it logs without one), at most its last 1 KiB.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var kept []string
	for _, line := range strings.Split(string(t.buf), "\n") {
		if !strings.Contains(line, ":ERROR:dbus/") {
			kept = append(kept, line)
		}
	}
	s := strings.TrimSpace(strings.Join(kept, "\n"))
	if len(s) > 1<<10 {
		s = "…" + s[len(s)-1<<10:]
	}
	return s
}

// child is a started process in a process group of its own.
type child struct {
	cmd  *exec.Cmd
	out  *tail
	done chan struct{} // closed when it has exited
	err  error         // its exit, once done
}

func startChild(name string, args []string, env []string) (*child, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out := &tail{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Helpers that outlive the leader keep its output pipe open; Wait
	// does not wait for them.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop ends the child's process group: SIGTERM, then SIGKILL after grace.
func (c *child) stop(grace time.Duration) {
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
	// Whatever of the group outlived its leader.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// session is the display and the browser a serve started, supervised:
// the browser is restarted when it exits, and Done is closed when Xvfb
// exits.
type session struct {
	log     *slog.Logger
	xvfb    *child
	browser []string // command and arguments
	env     []string
	profile string

	stopBrowser chan struct{}
	browserDone chan struct{}
}

// sessionOptions configure startSession.
type sessionOptions struct {
	Display       int
	Width, Height int
	Xvfb          string
	Browser       []string // command and arguments, URL last
	Profile       string
	ReadyTimeout  time.Duration
	RestartDelays []time.Duration // between browser restarts; the last repeats
}

// startSession starts Xvfb, waits for the display, and starts the browser
// supervisor.
func startSession(ctx context.Context, log *slog.Logger, o sessionOptions) (*session, error) {
	args := []string{fmt.Sprintf(":%d", o.Display), "-screen", "0", fmt.Sprintf("%dx%dx24", o.Width, o.Height), "-nolisten", "tcp"}
	log.Info("computer-use: starting Xvfb", "args", strings.Join(args, " "))
	t0 := time.Now()
	x, err := startChild(o.Xvfb, args, nil)
	if err != nil {
		return nil, fmt.Errorf("starting Xvfb: %w", err)
	}
	if err := waitDisplay(ctx, o.Display, x.done, o.ReadyTimeout); err != nil {
		x.stop(2 * time.Second)
		if out := x.out.String(); out != "" {
			err = fmt.Errorf("%w: %s", err, out)
		}
		return nil, err
	}
	log.Info("computer-use: the display answers", "display", fmt.Sprintf(":%d", o.Display), "after", time.Since(t0).Round(time.Millisecond))
	s := &session{
		log: log, xvfb: x, browser: o.Browser, profile: o.Profile,
		env:         []string{fmt.Sprintf("DISPLAY=:%d", o.Display)},
		stopBrowser: make(chan struct{}), browserDone: make(chan struct{}),
	}
	go s.superviseBrowser(o.RestartDelays)
	return s, nil
}

// Done is closed when Xvfb has exited.
func (s *session) Done() <-chan struct{} { return s.xvfb.done }

// XvfbExit describes how Xvfb ended.
func (s *session) XvfbExit() error {
	err := s.xvfb.err
	if err == nil {
		err = errors.New("exited")
	}
	if out := s.xvfb.out.String(); out != "" {
		return fmt.Errorf("%w: %s", err, out)
	}
	return err
}

// superviseBrowser runs the browser until stopBrowser is closed,
// restarting it after each exit (sooner again once it has run a while).
// It starts none while another browser holds the profile.
func (s *session) superviseBrowser(delays []time.Duration) {
	defer close(s.browserDone)
	if len(delays) == 0 {
		delays = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}
	}
	failures := 0
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-s.stopBrowser:
			return false
		case <-t.C:
			return true
		}
	}
	for {
		if BrowserRunning(s.profile) {
			if !wait(delays[0]) {
				return
			}
			continue
		}
		// A browser that died left its endpoint's file behind.
		_ = os.Remove(filepath.Join(s.profile, devToolsFile))
		b, err := startChild(s.browser[0], s.browser[1:], s.env)
		if err != nil {
			s.log.Error("computer-use: starting the browser failed", "error", err)
		} else {
			s.log.Info("computer-use: browser started", "pid", b.cmd.Process.Pid)
			started := time.Now()
			select {
			case <-s.stopBrowser:
				b.stop(5 * time.Second)
				return
			case <-b.done:
			}
			if time.Since(started) > time.Minute {
				failures = 0
			}
			s.log.Warn("computer-use: the browser exited; restarting it", "error", b.err, "output", b.out.String())
		}
		d := delays[min(failures, len(delays)-1)]
		failures++
		if !wait(d) {
			return
		}
	}
}

// stop stops the browser, then Xvfb.
func (s *session) stop() {
	close(s.stopBrowser)
	<-s.browserDone
	s.xvfb.stop(5 * time.Second)
}
