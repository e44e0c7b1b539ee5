package browser

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// terminalStatus is a JavaScript expression: the terminal's status line.
const terminalStatus = `document.querySelector(".terminal-status")?.textContent.trim()`

// rowsWithLine is a JavaScript expression: how many rows of the
// terminal's screen read exactly line.
func rowsWithLine(line string) string {
	return `[...document.querySelectorAll(".terminal .xterm-rows > div")].filter((r) => r.textContent.trim() === ` + jsString(line) + `).length`
}

// sizeLine matches what `echo S$(stty size | tr " " x)E` prints.
var sizeLine = regexp.MustCompile(`^S(\d+)x(\d+)E$`)

// sttySize types a command printing the shell's terminal size and reads
// the answer from the screen once it differs from not.
func (p *tab) sttySize(not [2]int) [2]int {
	p.t.Helper()
	p.typeLine(`echo S$(stty size | tr " " x)E`)
	last := `[...document.querySelectorAll(".terminal .xterm-rows > div")].map((r) => r.textContent.trim()).filter((l) => /^S\d+x\d+E$/.test(l)).pop()`
	p.waitFor("the shell's terminal size", last+` && `+last+` !== `+jsString(fmt.Sprintf("S%dx%dE", not[0], not[1])))
	m := sizeLine.FindStringSubmatch(eval[string](p, last))
	rows, _ := strconv.Atoi(m[1])
	cols, _ := strconv.Atoi(m[2])
	return [2]int{rows, cols}
}

// TestTerminalMore drives a running runtime's terminal on one server: it
// follows its element's size, copies and pastes through the clipboard,
// and comes back after the network drops, with what it missed replayed.
func TestTerminalMore(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	s.startRuntime(t, f, "p1")
	t.Run("resize", func(t *testing.T) { terminalResize(t, s, f) })
	t.Run("copy and paste", func(t *testing.T) { terminalCopyPaste(t, s, f) })
	t.Run("reconnect", func(t *testing.T) { terminalReconnect(t, s, f) })
}

// terminalResize narrows the window and shortens the terminal's element:
// the shell's `stty size` follows, and has as many rows as the screen.
func terminalResize(t *testing.T, s *server, f fleet) {
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.openTerminal(f, f.runtimes["p1"])
	p.waitFor("connected", terminalStatus+` === "Connected"`)
	screenRows := `document.querySelectorAll(".terminal .xterm-rows > div").length`
	before := p.sttySize([2]int{})
	if n := eval[int](p, screenRows); before[0] != n {
		t.Errorf("stty size says %d rows, the screen has %d", before[0], n)
	}
	p.do("narrow the window", chromedp.EmulateViewport(900, 800))
	eval[bool](p, `(document.querySelector(".terminal").style.height = "240px", true)`)
	p.waitFor("fewer rows on the screen", screenRows+` < `+strconv.Itoa(before[0]))
	after := p.sttySize(before)
	if after[0] >= before[0] || after[1] >= before[1] {
		t.Errorf("stty size was %v, is %v after the terminal shrank; want both smaller", before, after)
	}
	if n := eval[int](p, screenRows); after[0] != n {
		t.Errorf("stty size says %d rows after the resize, the screen has %d", after[0], n)
	}
}

// grantClipboard lets the tab's pages read and write the clipboard.
func (p *tab) grantClipboard() {
	p.t.Helper()
	c := chromedp.FromContext(p.ctx)
	_, err := chromedp.CallBrowser(p.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission:       &cdpbrowser.PermissionDescriptor{Name: "clipboard-read"},
		Setting:          cdpbrowser.PermissionSettingGranted,
		Origin:           p.base,
		BrowserContextID: c.BrowserContextID,
	})
	if err == nil {
		_, err = chromedp.CallBrowser(p.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission:       &cdpbrowser.PermissionDescriptor{Name: "clipboard-write"},
			Setting:          cdpbrowser.PermissionSettingGranted,
			Origin:           p.base,
			BrowserContextID: c.BrowserContextID,
		})
	}
	if err != nil {
		p.t.Fatalf("grant the clipboard: %v", err)
	}
}

// doubleClick double-clicks at x, y with the left button, as a mouse does:
// a first click, then a second with a click count of two.
func (p *tab) doubleClick(what string, x, y float64) {
	p.t.Helper()
	p.do(what, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		for n := int64(1); n <= 2; n++ {
			for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
				_, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
					Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: n,
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// terminalCopyPaste selects a word of the shell's output with the mouse,
// copies it with the Copy button onto the clipboard, and pastes a line
// from the clipboard into the shell with the Paste button.
func terminalCopyPaste(t *testing.T, s *server, f fleet) {
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.grantClipboard()
	p.openTerminal(f, f.runtimes["p1"])
	p.typeLine("echo copy$((6*7))me")
	p.waitFor("the word on the screen", rowsHaveLine("copy42me"))
	at := eval[[]float64](p, `(() => {
		const r = [...document.querySelectorAll(".terminal .xterm-rows > div")].find((r) => r.textContent.trim() === "copy42me").getBoundingClientRect();
		return [r.left + 12, r.top + r.height / 2];
	})()`)
	p.doubleClick("select the word", at[0], at[1])
	p.click("Copy", button("Copy"))
	p.waitFor("the word on the clipboard", `navigator.clipboard.readText().then((t) => t === "copy42me")`)

	eval[bool](p, `navigator.clipboard.writeText("echo pasted-$((40+2))").then(() => true)`)
	p.click("Paste", button("Paste"))
	p.waitFor("the pasted command on the screen", `document.querySelector(".terminal .xterm-rows").textContent.includes("echo pasted-$((40+2))")`)
	p.typeLine("")
	p.waitFor("the pasted command's answer", rowsHaveLine("pasted-42"))
}

// trackSockets makes the tab's next pages note each WebSocket they open
// in window.__sockets, so that a test can break them as a network that
// drops would: DevTools' offline emulation stops new connections only.
// The script is DevTools', not the page's, so the page's CSP allows it.
func (p *tab) trackSockets() {
	p.t.Helper()
	_, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		const Native = window.WebSocket;
		window.__sockets = [];
		window.WebSocket = class extends Native {
			constructor(...args) {
				super(...args);
				window.__sockets.push(this);
			}
		};
	})()`})
	if err != nil {
		p.t.Fatal(err)
	}
}

// setOffline cuts the tab's network or gives it back. Cut, the tab's
// open WebSockets are broken (closed with 4000, not the normal 1000 a
// user's close sends) and new connections fail until it is given back.
func (p *tab) setOffline(offline bool) {
	p.t.Helper()
	_, err := chromedp.Call(p.ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}},
	})
	if err == nil {
		_, err = chromedp.Call(p.ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{
			Offline: offline, DownloadThroughput: -1, UploadThroughput: -1,
		})
	}
	if err != nil {
		p.t.Fatalf("set the network offline=%v: %v", offline, err)
	}
	if offline {
		eval[bool](p, `(window.__sockets.filter((s) => s.readyState === WebSocket.OPEN).forEach((s) => s.close(4000, "network cut")), true)`)
	}
}

// terminalReconnect cuts the network under an open terminal while the
// shell has output to give: the terminal says it reconnects, comes back
// when the network does, and shows what was printed in between once,
// after what it showed before, once.
func terminalReconnect(t *testing.T, s *server, f fleet) {
	id := f.runtimes["p1"]
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.trackSockets()
	p.openTerminal(f, id)
	p.waitFor("connected", terminalStatus+` === "Connected"`)
	if n := eval[int](p, `window.__sockets.length`); n != 1 {
		t.Fatalf("the terminal's page opened %d WebSockets, want 1", n)
	}
	p.typeLine("echo one")
	p.waitFor("one on the screen", rowsWithLine("one")+` === 1`)
	// The shell prints "two" when the test lets it, while the network is
	// cut, and then says so in a file the test reads through the API.
	run := func(argv ...string) int {
		r, err := s.sdk.Exec(t.Context(), f.org, f.ws, id, pc.ExecRequest{Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit == nil {
			return -1
		}
		return r.Exit.Code
	}
	p.typeLine("rm -f /workspace/go /workspace/done /workspace/looping; touch /workspace/looping; until [ -e /workspace/go ]; do sleep 1; done; echo two; touch /workspace/done")
	// The line has reached the shell before the network goes: keys still
	// on their way would be lost with the socket.
	testenv.WaitFor(t, "the shell to run the loop", func() bool { return run("test", "-e", "/workspace/looping") == 0 })
	p.setOffline(true)
	p.waitFor("the terminal reconnecting", terminalStatus+` === "Reconnecting…"`)
	run("touch", "/workspace/go")
	testenv.WaitFor(t, "the shell to print two", func() bool { return run("test", "-e", "/workspace/done") == 0 })
	if n := eval[int](p, rowsWithLine("two")); n != 0 {
		t.Fatalf("two reached the screen while the network was cut (%d rows)", n)
	}
	p.setOffline(false)
	p.waitFor("the terminal connected again", terminalStatus+` === "Connected"`)
	p.waitFor("two replayed", rowsWithLine("two")+` >= 1`)
	for _, line := range []string{"one", "two"} {
		if n := eval[int](p, rowsWithLine(line)); n != 1 {
			t.Errorf("%q shows on %d rows of the screen, want 1", line, n)
		}
	}
	p.typeLine("echo three")
	p.waitFor("the shell answering after the reconnect", rowsHaveLine("three"))
}
