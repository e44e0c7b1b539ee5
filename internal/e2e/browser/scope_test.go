package browser

import (
	"slices"
	"sort"
	"testing"

	"github.com/chromedp/chromedp"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// newWorkspace creates workspace ws of org (the org too, when create
// says so) with a stopped runtime per project.
func (s *server) newWorkspace(t *testing.T, org, ws string, create bool, projects ...string) fleet {
	t.Helper()
	ctx := t.Context()
	if create {
		if _, err := s.sdk.CreateOrg(ctx, pc.CreateOrgRequest{Name: org}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.sdk.CreateWorkspace(ctx, org, pc.CreateWorkspaceRequest{Name: ws}); err != nil {
		t.Fatal(err)
	}
	f := fleet{org: org, ws: ws, runtimes: map[string]string{}}
	for _, name := range projects {
		p, err := s.sdk.CreateProject(ctx, org, ws, pc.CreateProjectRequest{
			Name:    name,
			Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64},
		})
		if err != nil {
			t.Fatal(err)
		}
		f.runtimes[name] = p.RuntimeID
	}
	return f
}

// showsOnly waits until the runtimes table holds exactly f's runtimes
// and the URL is f's.
func (p *tab) showsOnly(f fleet) {
	p.t.Helper()
	var want []string
	for _, id := range f.runtimes {
		want = append(want, id)
	}
	sort.Strings(want)
	p.waitFor("the runtimes of "+f.org+"/"+f.ws, `location.pathname === `+jsString(f.path("runtimes"))+` && `+
		`JSON.stringify([...document.querySelectorAll('table[aria-label="Runtimes"] tr[data-runtime]')].map((r) => r.dataset.runtime).sort()) === `+jsString(jsonOf(want)))
	sel := eval[[]string](p, `[document.getElementById("org-select").value, document.getElementById("ws-select").value]`)
	if !slices.Equal(sel, []string{f.org, f.ws}) {
		p.t.Errorf("the selects read %q on %s/%s", sel, f.org, f.ws)
	}
}

// TestSwitchOrgAndWorkspace has the installation admin, who sees every
// org, switch workspace and org with the header's selects: the runtimes
// table shows the chosen workspace's runtimes only. No workspace is
// named default: the console opens an org on one it may see.
func TestSwitchOrgAndWorkspace(t *testing.T) {
	s := serve(t)
	dev := s.newWorkspace(t, "acme", "dev", true, "api", "web")
	ops := s.newWorkspace(t, "acme", "ops", false, "monitor")
	lab := s.newWorkspace(t, "globex", "lab", true, "experiment")
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(dev.path("runtimes"))
	p.showsOnly(dev)
	p.waitFor("ops offered", `[...document.getElementById("ws-select").options].some((o) => o.value === "ops")`)
	p.pick("ws-select", "ops")
	p.showsOnly(ops)
	p.waitFor("globex offered", `[...document.getElementById("org-select").options].some((o) => o.value === "globex")`)
	p.pick("org-select", "globex")
	p.showsOnly(lab)
	p.pick("org-select", "acme")
	p.waitFor("acme chosen", `location.pathname.startsWith("/o/acme/w/")`)
	p.pick("ws-select", "dev")
	p.showsOnly(dev)
	// A move inside the app to a workspace that does not exist shows its
	// error, and none of the last workspace's runtimes under it.
	p.do("move to a missing workspace", chromedp.Evaluate[chromedp.Void](`history.pushState(null, "", "/o/acme/w/nope/runtimes"); dispatchEvent(new PopStateEvent("popstate"))`))
	p.waitFor("the missing workspace's error", `[...document.querySelectorAll('[role="alert"]')].some((e) => e.textContent.includes("workspace_not_found"))`)
	if n := eval[int](p, `document.querySelectorAll('tr[data-runtime]').length`); n != 0 {
		t.Errorf("a missing workspace's page shows %d runtimes of the last one", n)
	}
}

// TestViewerPagesAccessible checks, as a viewer sees them, the pages a
// viewer reads: axe-core finds no serious or critical violation.
func TestViewerPagesAccessible(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	viewer := s.memberKey(t, f, "viewer@acme.example", "viewer")
	p := newTab(t, s.url)
	p.signIn(viewer)
	ready := map[string]string{
		"runtimes": exists(runtimeRow(f.runtimes["p1"])),
		"members":  exists(`tr[data-member="viewer@acme.example"]`),
	}
	for _, page := range []string{"runtimes", "ledger", "members", "keys", "secrets"} {
		t.Run(page, func(t *testing.T) {
			p := p.in(t)
			p.open(f.path(page))
			p.settled(page)
			if r, ok := ready[page]; ok {
				p.waitFor(page+" ready", r)
			}
			p.axe(page + " as a viewer")
		})
	}
}
