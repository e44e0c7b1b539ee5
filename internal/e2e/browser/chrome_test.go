package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/console"
)

// chromium is Debian's Chromium, the only browser the tests drive: none is
// downloaded.
const chromium = "/usr/bin/chromium"

// RequireEnv, when set (scripts/test.sh sets it), makes a missing console
// build or Chromium fail the tests instead of skipping them.
const requireEnv = "PADDOCK_REQUIRE_CONSOLE"

// requireConsole skips (or fails, see requireEnv) unless this test binary
// embeds the built console and Chromium is installed.
func requireConsole(t *testing.T) {
	t.Helper()
	if !console.Built() {
		missing(t, "the console is not built into this binary: run ./scripts/build-console.sh, then the tests")
	}
	if _, err := os.Stat(chromium); err != nil {
		missing(t, "no Chromium at %s: run scripts/setup-host.sh (Debian's chromium)", chromium)
	}
}

func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) != "" {
		t.Fatalf("%s is set, but %s", requireEnv, msg)
	}
	t.Skip(msg)
}

// browser is the one Chromium of the test binary, started by the first
// test that needs it and stopped by TestMain.
var browser struct {
	once   sync.Once
	ctx    context.Context // the browser's chromedp context
	cancel context.CancelFunc
	alloc  *chromedp.ExecAllocator
	pid    int
	err    error
}

// startBrowser starts Chromium headless, with a fresh user data directory
// that chromedp makes and removes, and the flags that keep it off the
// network except for what a page asks (loopback only, in these tests).
func startBrowser() error {
	browser.once.Do(func() {
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(chromium),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("no-default-browser-check", true),
			chromedp.WindowSize(1280, 800),
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		browser.cancel = func() { cancelBrowser(); cancelAlloc() }
		if err := chromedp.Do(bctx); err != nil { // starts it, with a first tab
			browser.cancel()
			browser.err = fmt.Errorf("start %s: %w", chromium, err)
			return
		}
		c := chromedp.FromContext(bctx)
		browser.ctx, browser.pid = bctx, c.Browser.Process().Pid
		browser.alloc, _ = c.Allocator.(*chromedp.ExecAllocator)
	})
	return browser.err
}

// stopBrowser closes Chromium, waits for its process to end and makes
// sure it did: a browser left running would outlive the tests.
func stopBrowser() error {
	if browser.ctx == nil {
		return nil
	}
	closeErr := chromedp.Cancel(browser.ctx) // asks the browser to close
	browser.cancel()                         // kills it if it did not, and reaps it
	if browser.alloc != nil {
		browser.alloc.Wait() // and its leftover children, and the data directory
	}
	if err := syscall.Kill(browser.pid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(browser.pid, syscall.SIGKILL)
		return fmt.Errorf("chromium (pid %d) still ran after it was stopped", browser.pid)
	}
	if closeErr != nil && !errors.Is(closeErr, context.Canceled) {
		return fmt.Errorf("close chromium: %w", closeErr)
	}
	return nil
}

// newTab opens a tab in a browser context of its own (its own cookies and
// storage), closed when the test ends, with the window at 1280×800.
func newTab(t *testing.T, base string) *tab {
	t.Helper()
	requireConsole(t)
	if err := startBrowser(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The tab's first action has no deadline: the tab lives as long as
	// the context of its first action.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	p := &tab{t: t, ctx: ctx, base: base, log: new(pageLog)}
	p.watch()
	return p
}
