package browser

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// rowsHaveLine is a JavaScript expression: whether a row of the terminal's
// screen reads exactly line (the output, not the echoed command).
func rowsHaveLine(line string) string {
	return `[...document.querySelectorAll(".terminal .xterm-rows > div")].some((r) => r.textContent.trim() === ` + jsString(line) + `)`
}

// openTerminal opens a runtime's terminal tab and waits for the shell to
// print something (its prompt): the stream is connected.
func (p *tab) openTerminal(f fleet, id string) {
	p.t.Helper()
	p.open(f.path("runtimes/" + id + "/terminal"))
	p.do("the terminal", chromedp.WaitVisible(chromedp.CSS(".terminal .xterm-rows")))
	p.waitFor("the shell's prompt", `document.querySelector(".terminal .xterm-rows").textContent.trim() !== ""`)
}

// typeLine types text and Enter into the terminal, as a keyboard does:
// a key down carrying the character, then a key up (Puppeteer's way).
// chromedp's KeyEvent sends the character again in a separate char event,
// which xterm.js takes as a second keystroke.
func (p *tab) typeLine(text string) {
	p.t.Helper()
	p.do("focus the terminal", chromedp.Click(chromedp.CSS(".terminal .xterm-screen")))
	press := func(ctx context.Context, down input.DispatchKeyEventParams) error {
		down.Type = input.DispatchKeyEventTypeKeyDown
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := down
		up.Type, up.Text = input.DispatchKeyEventTypeKeyUp, ""
		_, err := chromedp.Call(ctx, input.DispatchKeyEvent, up)
		return err
	}
	p.do("type "+text, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		for _, r := range text {
			if err := press(ctx, input.DispatchKeyEventParams{Key: string(r), Text: string(r)}); err != nil {
				return err
			}
		}
		return press(ctx, input.DispatchKeyEventParams{Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, Text: "\r"})
	}))
}

// TestTerminalEcho types `echo hello` into a running runtime's terminal
// and reads hello back from the terminal's screen.
func TestTerminalEcho(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	s.startRuntime(t, f, "p1")
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.openTerminal(f, f.runtimes["p1"])
	p.typeLine("echo hello")
	p.waitFor("hello on the terminal's screen", rowsHaveLine("hello"))
}

// TestTerminalWakesPausedRuntime opens the terminal of a paused runtime:
// the runtime is woken, and the terminal works.
func TestTerminalWakesPausedRuntime(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	s.startRuntime(t, f, "p1")
	if _, err := s.sdk.PauseRuntime(t.Context(), f.org, f.ws, id); err != nil {
		t.Fatal(err)
	}
	if rt := s.runtime(t, f, "p1"); rt.Status != pc.RuntimePaused {
		t.Fatalf("p1 is %s after a pause", rt.Status)
	}
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.openTerminal(f, id)
	p.typeLine("echo woke-$((40+2))")
	p.waitFor("the woken runtime's answer", rowsHaveLine("woke-42"))
	if rt := s.runtime(t, f, "p1"); rt.Status != pc.RuntimeRunning {
		t.Fatalf("p1 is %s after its terminal opened, want running", rt.Status)
	}
}
