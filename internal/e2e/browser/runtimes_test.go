package browser

import (
	"testing"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestRuntimeStateLive starts a runtime from the runtimes table and sees
// its row turn running, then sees a pause made through the API elsewhere
// show in the row: both without a reload (a mark set on the page's window
// survives, which a navigation would drop).
func TestRuntimeStateLive(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("runtimes"))
	row := jsString(runtimeRow(id))
	p.waitFor("the row of p1", `document.querySelector(`+row+`) !== null`)
	eval[bool](p, `(window.__marker = "kept", true)`)

	p.click("Start p1", button("Start p1"))
	p.waitFor("p1 running in its row", `document.querySelector(`+row+`)?.dataset.status === "running"`)
	if rt := s.runtime(t, f, "p1"); rt.Status != pc.RuntimeRunning {
		t.Fatalf("the API says p1 is %s after the console started it", rt.Status)
	}

	if _, err := s.sdk.PauseRuntime(t.Context(), f.org, f.ws, id); err != nil {
		t.Fatal(err)
	}
	p.waitFor("p1 paused in its row", `document.querySelector(`+row+`)?.dataset.status === "paused"`)
	p.waitFor("a resume button for p1", button("Resume p1")+` !== null`)
	if got := eval[string](p, `String(window.__marker)`); got != "kept" {
		t.Fatalf("the page was reloaded or navigated away (window.__marker = %q)", got)
	}
}
