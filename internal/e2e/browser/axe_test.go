package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/testenv"
)

// axeRun runs axe-core on the page and keeps its serious and critical
// violations, each with the elements it found.
const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations
	.filter((v) => v.impact === "serious" || v.impact === "critical")
	.map((v) => v.impact + " " + v.id + ": " + v.help + "\n" + v.nodes.slice(0, 6)
		.map((n) => "    " + n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " ")).join("\n")))`

// axe checks the page with axe-core and fails the test with every serious
// or critical violation. axe is injected by DevTools evaluation, which the
// page's CSP does not govern; the page's own scripts stay under it.
func (p *tab) axe(what string) {
	p.t.Helper()
	// axe-core from the console's npm packages (web/package.json pins it;
	// npm ci in ./scripts/build-console.sh installs it).
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(p.t), "web", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		missing(p.t, "axe-core is not installed (%v): run ./scripts/build-console.sh", err)
	}
	if !eval[bool](p, `typeof window.axe !== "undefined"`) {
		p.do("inject axe-core", chromedp.Evaluate[chromedp.Void](string(src)))
	}
	found := eval[[]string](p, axeRun)
	if len(found) > 0 {
		p.t.Errorf("axe-core on %s: %d serious or critical violations:\n%s", what, len(found), strings.Join(found, "\n"))
	}
}

// tourStop is a page of the tour: its path under the workspace, what it
// must show before it is checked, and the screenshot it gives.
type tourStop struct {
	path  string
	ready string // a JavaScript predicate, besides a heading and nothing loading
	shot  string // docs/console/<shot>.png; "" for none
}

// tour is every page of the console a signed-in installation admin sees.
func tour(id string) []tourStop {
	rt := "runtimes/" + id + "/"
	stops := []tourStop{
		{path: "runtimes", ready: `document.querySelector('table[aria-label="Runtimes"] tr[data-runtime]')`, shot: "runtimes"},
		{path: rt + "overview", shot: "runtime"},
	}
	for _, tab := range []string{"config", "network", "secrets", "capabilities", "processes", "ports", "sessions", "sandboxes"} {
		stops = append(stops, tourStop{path: rt + tab})
	}
	return append(stops,
		tourStop{path: rt + "terminal", ready: `document.querySelector(".terminal .xterm-rows")?.textContent.trim()`, shot: "terminal"},
		tourStop{path: rt + "files", ready: `document.querySelector('table[aria-label="Files"]')`, shot: "files"},
		tourStop{path: "ledger", shot: "ledger"},
		tourStop{path: "credits", shot: "credits"},
		tourStop{path: "members", shot: "members"},
		tourStop{path: "keys", shot: "keys"},
		tourStop{path: "ssh-keys"},
		tourStop{path: "secrets"},
		tourStop{path: "admin/orgs"},
		tourStop{path: "admin/providers"},
		tourStop{path: "admin/warm-pool"},
		tourStop{path: "admin/provisions", shot: "provisions"},
	)
}

// TestEveryPage visits the sign-in page and every page of the console
// at 1280×800, each checked by axe-core (no serious or critical
// violation) and, with PADDOCK_CONSOLE_SCREENSHOTS=1, photographed into
// docs/console/ (how the README's pictures are refreshed).
func TestEveryPage(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1", "p2")
	id := f.runtimes["p1"]
	s.startRuntime(t, f, "p1")
	p := newTab(t, s.url)
	t.Run("sign-in", func(t *testing.T) {
		p := p.in(t)
		p.open("/")
		p.do("the sign-in form", chromedp.WaitVisible(chromedp.ID("signin-key")))
		p.axe("the sign-in page")
		p.screenshot("signin")
	})
	p.signIn(s.key)
	for _, stop := range tour(id) {
		t.Run(strings.ReplaceAll(stop.path, id, "p1"), func(t *testing.T) {
			p := p.in(t)
			p.open(f.path(stop.path))
			p.settled(stop.path)
			if stop.ready != "" {
				p.waitFor(stop.path+" ready", stop.ready)
			}
			p.axe(fmt.Sprintf("%s (%s)", stop.path, f.path(stop.path)))
			if stop.shot != "" {
				p.screenshot(stop.shot)
			}
		})
	}
}
