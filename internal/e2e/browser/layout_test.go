package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestNarrowAndWide opens the sign-in page, the runtimes table and a
// runtime's page at 1280×800 and at 400×800: the document never needs a
// horizontal scroll bar.
func TestNarrowAndWide(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	p := newTab(t, s.url)
	widths := []int64{1280, 400}
	for _, w := range widths {
		p.do("resize", chromedp.EmulateViewport(w, 800))
		p.open("/")
		p.do("the sign-in form", chromedp.WaitVisible(chromedp.ID("signin-key")))
		p.noOverflow(fmt.Sprintf("sign-in at %d×800", w))
	}
	p.signIn(s.key)
	for _, w := range widths {
		size := fmt.Sprintf("%d×800", w)
		p.do("resize to "+size, chromedp.EmulateViewport(w, 800))
		p.open(f.path("runtimes"))
		p.waitFor("the row of p1", `document.querySelector(`+jsString(runtimeRow(id))+`) !== null`)
		p.noOverflow("runtimes at " + size)
		p.open(f.path("runtimes/" + id + "/overview"))
		p.settled("p1's overview")
		p.noOverflow("p1's overview at " + size)
	}
}

// focusVisible is a JavaScript expression: whether the focused element
// shows it, by an outline or a box shadow.
const focusVisible = `(() => {
	const s = getComputedStyle(document.activeElement);
	return (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
})()`

// tabTo presses Tab until js (a JavaScript predicate on
// document.activeElement) holds, at most max times.
func (p *tab) tabTo(what, js string, max int) {
	p.t.Helper()
	for range max {
		if eval[bool](p, js) {
			return
		}
		p.do("press Tab", chromedp.KeyEvent(kb.Tab))
	}
	if !eval[bool](p, js) {
		p.t.Fatalf("%d presses of Tab did not reach %s; focus is on %s", max, what,
			eval[string](p, `document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : "nothing"`))
	}
}

// TestKeyboard reaches the sign-in field and the runtimes table's first
// action with Tab alone, signs in with the keyboard, and sees focus shown
// on each.
func TestKeyboard(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	p := newTab(t, s.url)
	p.open("/")
	p.do("the sign-in form", chromedp.WaitVisible(chromedp.ID("signin-key")))
	eval[bool](p, `(document.activeElement?.blur(), true)`) // from the top, not from an autofocus
	p.tabTo("the sign-in field", `document.activeElement?.id === "signin-key"`, 10)
	if !eval[bool](p, focusVisible) {
		t.Error("the focused sign-in field shows no focus (no outline, no shadow)")
	}
	p.do("type the key and Enter", chromedp.KeyEvent(s.key+"\r"))
	p.waitFor("the signed-in console", button("Sign out")+` !== null`)

	p.open(f.path("runtimes"))
	row := runtimeRow(id)
	p.waitFor("a button in p1's row", `document.querySelector(`+jsString(row+" button")+`) !== null`)
	first := `document.querySelector('table[aria-label="Runtimes"] button')`
	p.tabTo("the runtimes table's first action", `document.activeElement === `+first, 60)
	if !eval[bool](p, focusVisible) {
		t.Errorf("the runtimes table's first action (%s) shows no focus",
			eval[string](p, accName+`(document.activeElement)`))
	}
}
