package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/testenv"
)

// tab is a browser tab of a test's, on one server.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string // the server's URL

	log *pageLog
}

// pageLog is what a tab's page threw or logged as an error.
type pageLog struct {
	mu     sync.Mutex
	errors []string
}

// in is the tab for a subtest of its test.
func (p *tab) in(t *testing.T) *tab {
	return &tab{t: t, ctx: p.ctx, base: p.base, log: p.log}
}

// watch records the page's uncaught exceptions and console errors (shown
// when a step fails) and accepts the dialogs a confirm opens.
func (p *tab) watch() {
	err := chromedp.Listen(p.ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type != cdpruntime.ConsoleAPICalledTypeError {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			msg = "console.error: " + strings.Join(parts, " ")
		case *page.EventJavascriptDialogOpening:
			go func() { // not from the listener: it would wait on itself
				_, _ = chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
			return
		default:
			return
		}
		p.log.mu.Lock()
		p.log.errors = append(p.log.errors, msg)
		p.log.mu.Unlock()
	})
	if err != nil {
		p.t.Fatal(err)
	}
}

// do runs steps, failing the test with what the page shows if one fails
// or they take longer than testenv.Patience.
func (p *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testenv.Patience)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, p.describe())
	}
}

// describe is what the page shows, for a failure message.
func (p *tab) describe() string {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return fmt.Sprintf("page %s shows:\n%s\nerrors on the page: %q", where, text, p.log.errors)
}

// open loads a path of the server's in the tab.
func (p *tab) open(path string) {
	p.t.Helper()
	p.do("open "+path, chromedp.Navigate(p.base+path))
}

// eval evaluates js (awaiting a promise) in the page and decodes its
// value. DevTools evaluation is not held to the page's CSP.
func eval[T any](p *tab, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testenv.Patience)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v\n%s", js, err, p.describe())
	}
	return v
}

// waitFor polls js until it is truthy (an exception counts as false),
// failing the test after testenv.Patience. chromedp's own Poll builds a
// function from a string in the page, which the console's CSP forbids.
func (p *tab) waitFor(what, js string) {
	p.t.Helper()
	expr := fmt.Sprintf(`(async () => { try { return !!(await (%s)); } catch (e) { return false; } })()`, js)
	err := testenv.Poll(testenv.Patience, func() error {
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		p.t.Fatalf("waiting for %s (%s): %v\n%s", what, js, err, p.describe())
	}
}

// click waits until the element js selects is visible and clicks it with
// the mouse.
func (p *tab) click(what, js string) {
	p.t.Helper()
	p.do("click "+what, chromedp.WaitVisible(chromedp.JSPath(js)), chromedp.Click(chromedp.JSPath(js)))
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// accName is a JavaScript function giving an element's accessible name
// as a screen reader computes it for the cases the console uses:
// aria-labelledby, aria-label, a <label>, or the element's text.
const accName = `((e) => {
	const squash = (s) => (s || "").replace(/\s+/g, " ").trim();
	const by = e.getAttribute("aria-labelledby");
	if (by) return squash(by.split(/\s+/).map((id) => document.getElementById(id)?.textContent).join(" "));
	if (e.getAttribute("aria-label")) return squash(e.getAttribute("aria-label"));
	if (e.labels && e.labels.length) return squash([...e.labels].map((l) => l.textContent).join(" "));
	return squash(e.textContent);
})`

// named is a JavaScript expression selecting the first element matching
// css whose accessible name is name, or null.
func named(css, name string) string {
	return fmt.Sprintf(`([...document.querySelectorAll(%s)].find((e) => %s(e) === %s) ?? null)`,
		jsString(css), accName, jsString(name))
}

// button selects the button (or link) named name.
func button(name string) string {
	return named(`button, [role="button"], a`, name)
}

// runtimeRow is the CSS selector of a runtime's row in the runtimes table.
func runtimeRow(id string) string {
	return `table[aria-label="Runtimes"] tr[data-runtime="` + id + `"]`
}

// cookies are the browser's cookies for the server, HttpOnly ones too.
func (p *tab) cookies() []*network.Cookie {
	p.t.Helper()
	res, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.base + "/"}})
	if err != nil {
		p.t.Fatal(err)
	}
	return res.Cookies
}

// cookieHeader is the Cookie header the browser would send the server.
func (p *tab) cookieHeader() string {
	p.t.Helper()
	var parts []string
	for _, c := range p.cookies() {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// signIn signs in on the sign-in page with key and waits for the console.
func (p *tab) signIn(key string) {
	p.t.Helper()
	p.open("/")
	p.do("the sign-in form", chromedp.WaitVisible(chromedp.ID("signin-key")))
	if got := eval[string](p, accName+`(document.getElementById("signin-key"))`); got != "API key" {
		p.t.Errorf("the sign-in field's accessible name is %q, want %q", got, "API key")
	}
	p.do("type the key", chromedp.SendKeys(chromedp.ID("signin-key"), key))
	p.click("Sign in", button("Sign in"))
	p.waitFor("the signed-in console", button("Sign out")+` !== null && !document.getElementById("signin-key")`)
}

// settled waits until the page has its heading and nothing loads.
func (p *tab) settled(what string) {
	p.t.Helper()
	p.waitFor(what+" loaded", `document.querySelector("main h1, h1") !== null && `+
		`document.querySelector('.loading, [aria-busy="true"]') === null`)
}

// fill replaces the text of the input or textarea with id by text, typed
// as a keyboard does (each key an input event the page sees). The field
// is emptied first by script (chromedp's Clear resets the value
// attribute only, not what a user typed).
func (p *tab) fill(id, text string) {
	p.t.Helper()
	value := `document.getElementById(` + jsString(id) + `).value`
	// A form the page renders again (data it was still loading came in)
	// loses what was typed: type again until the field holds it.
	err := testenv.Poll(testenv.Patience, func() error {
		if eval[string](p, value) == text {
			return nil
		}
		eval[bool](p, `(`+value+` = "", true)`)
		p.do("fill #"+id, chromedp.SendKeys(chromedp.ID(id), text))
		if got := eval[string](p, value); got != text {
			return fmt.Errorf("#%s holds %q", id, got)
		}
		return nil
	})
	if err != nil {
		p.t.Fatalf("fill #%s with %q: %v\n%s", id, text, err, p.describe())
	}
}

// shotsEnv, set to 1, makes the page tour write docs/console/*.png.
const shotsEnv = "PADDOCK_CONSOLE_SCREENSHOTS"

// screenshot writes the tab's viewport to docs/console/name.png when
// shotsEnv asks for it.
func (p *tab) screenshot(name string) {
	p.t.Helper()
	if os.Getenv(shotsEnv) != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, testenv.Patience)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join(testenv.RepoRoot(p.t), "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// noOverflow fails the test when the document is wider than the window
// (a horizontal scroll bar).
func (p *tab) noOverflow(what string) {
	p.t.Helper()
	w := eval[[]int](p, `[document.documentElement.scrollWidth, window.innerWidth]`)
	if w[0] > w[1] {
		wide := eval[[]string](p, `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : ""))`)
		p.t.Errorf("%s: the document is %d px wide in a %d px window; too wide: %v", what, w[0], w[1], wide)
	}
}
