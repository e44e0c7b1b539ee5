package computeruse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Driver does what the MCP tools ask of the display and the browser.
// XDriver is the real one; tests use fakes.
type Driver interface {
	// Screenshot captures the whole display.
	Screenshot(ctx context.Context) (image.Image, error)
	MouseMove(ctx context.Context, x, y int) error
	// Click moves the pointer to x, y and clicks button (left, right or
	// middle), twice when double.
	Click(ctx context.Context, x, y int, button string, double bool) error
	// Type types text as keystrokes.
	Type(ctx context.Context, text string) error
	// Key presses keys, xdotool's key syntax ("ctrl+l", "Return"), several
	// separated by spaces.
	Key(ctx context.Context, keys string) error
	// Scroll moves the pointer to x, y and scrolls amount steps in
	// direction (up, down, left or right).
	Scroll(ctx context.Context, x, y int, direction string, amount int) error
	// CursorPosition returns where the pointer is.
	CursorPosition(ctx context.Context) (x, y int, err error)
	// OpenURL opens url in the browser.
	OpenURL(ctx context.Context, url string) error
}

// Runner runs a command to its end and returns its standard output.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands as child processes, with env added to this
// process's environment. Their standard error is in the error when they
// fail.
type ExecRunner struct{ Env []string }

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// The whole group goes when the context ends (a browser handing a URL
	// to the running one may have started helpers).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 512 {
			msg = msg[len(msg)-512:]
		}
		if msg != "" {
			return out, fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// XDriver drives an X display with xdotool and xwd, and the running
// Chromium through its DevTools endpoint.
type XDriver struct {
	Display string
	Runner  Runner
	// ProfileDir is the browser's profile directory, whose
	// DevToolsActivePort names its DevTools endpoint.
	ProfileDir string
	// BrowserUp, when set, is closed once the browser started with the
	// display answers, or will not: the browser's tools wait for it.
	BrowserUp <-chan struct{}
}

var _ Driver = (*XDriver)(nil)

func (d *XDriver) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return d.Runner.Run(ctx, name, args...)
}

func (d *XDriver) xdotool(ctx context.Context, args ...string) ([]byte, error) {
	return d.run(ctx, "xdotool", args...)
}

// Screenshot implements Driver with `xwd -root`.
func (d *XDriver) Screenshot(ctx context.Context) (image.Image, error) {
	out, err := d.run(ctx, "xwd", "-root", "-silent", "-display", d.Display)
	if err != nil {
		return nil, err
	}
	return DecodeXWD(out)
}

// MouseMove implements Driver.
func (d *XDriver) MouseMove(ctx context.Context, x, y int) error {
	_, err := d.xdotool(ctx, "mousemove", "--sync", strconv.Itoa(x), strconv.Itoa(y))
	return err
}

// buttons are X's pointer buttons by name, wheel included.
var buttons = map[string]string{"left": "1", "middle": "2", "right": "3", "up": "4", "down": "5", "left-wheel": "6", "right-wheel": "7"}

// Click implements Driver.
func (d *XDriver) Click(ctx context.Context, x, y int, button string, double bool) error {
	b, ok := buttons[button]
	if !ok || (button != "left" && button != "middle" && button != "right") {
		return fmt.Errorf("button %q: want left, right or middle", button)
	}
	args := []string{"mousemove", "--sync", strconv.Itoa(x), strconv.Itoa(y), "click"}
	if double {
		args = append(args, "--repeat", "2", "--delay", "80")
	}
	_, err := d.xdotool(ctx, append(args, b)...)
	return err
}

// Type implements Driver.
func (d *XDriver) Type(ctx context.Context, text string) error {
	_, err := d.xdotool(ctx, "type", "--delay", "12", "--", text)
	return err
}

// Key implements Driver.
func (d *XDriver) Key(ctx context.Context, keys string) error {
	ks := strings.Fields(keys)
	if len(ks) == 0 {
		return errors.New("no keys")
	}
	_, err := d.xdotool(ctx, append([]string{"key", "--delay", "50", "--"}, ks...)...)
	return err
}

// Scroll implements Driver: wheel clicks (buttons 4 to 7).
func (d *XDriver) Scroll(ctx context.Context, x, y int, direction string, amount int) error {
	name := direction
	if direction == "left" || direction == "right" {
		name = direction + "-wheel"
	} else if direction != "up" && direction != "down" {
		return fmt.Errorf("direction %q: want up, down, left or right", direction)
	}
	_, err := d.xdotool(ctx, "mousemove", "--sync", strconv.Itoa(x), strconv.Itoa(y),
		"click", "--repeat", strconv.Itoa(amount), "--delay", "30", buttons[name])
	return err
}

// CursorPosition implements Driver.
func (d *XDriver) CursorPosition(ctx context.Context) (int, int, error) {
	out, err := d.xdotool(ctx, "getmouselocation", "--shell")
	if err != nil {
		return 0, 0, err
	}
	return parseMouseLocation(out)
}

// parseMouseLocation reads `xdotool getmouselocation --shell`: X=…, Y=…,
// SCREEN=…, WINDOW=… lines.
func parseMouseLocation(out []byte) (int, int, error) {
	var x, y int
	var gotX, gotY bool
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		switch {
		case k == "X" && err == nil:
			x, gotX = n, true
		case k == "Y" && err == nil:
			y, gotY = n, true
		}
	}
	if !gotX || !gotY {
		return 0, 0, fmt.Errorf("xdotool getmouselocation printed %q", out)
	}
	return x, y, nil
}

// ErrNoBrowser is returned by OpenURL when no browser runs on the profile.
var ErrNoBrowser = errors.New("the browser is not running")

// OpenURL implements Driver: the running browser opens the URL in a new
// tab in front, asked through its DevTools endpoint, once it is up. It
// never starts a browser.
func (d *XDriver) OpenURL(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, openURLTimeout)
	defer cancel()
	if d.BrowserUp != nil {
		select {
		case <-d.BrowserUp:
		case <-ctx.Done():
			return ErrNoBrowser
		}
	}
	return openTab(ctx, d.ProfileDir, url)
}

// openURLTimeout bounds open_url, waiting for a browser still starting
// included: the browser answers at once when it is not starved of CPU, and
// a loaded machine may be many times slower.
const openURLTimeout = 2 * time.Minute

// BrowserRunning reports whether a Chromium runs on the profile in dir:
// its SingletonLock link names the host and pid of the browser holding the
// profile.
func BrowserRunning(dir string) bool {
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(target, '-')
	if i < 0 {
		return false
	}
	pid, err := strconv.Atoi(target[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	// The pid of a browser that died without removing its lock may be
	// another process's by now.
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.HasPrefix(string(comm), "chrom")
}
