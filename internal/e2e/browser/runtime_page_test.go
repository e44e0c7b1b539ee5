package browser

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// headStatus is a JavaScript expression: the status the runtime page's
// header shows.
const headStatus = `document.querySelector(".page-head .status")?.textContent.trim()`

// headAction selects the header's button of an action.
func headAction(action string) string {
	return `document.querySelector('.page-head button[data-action="` + action + `"]')`
}

// TestRuntimePage drives the tabs of a runtime's page on one server, a
// project (and runtime) per subtest: the header's actions, the config
// form, processes, ports, sessions, and what a viewer sees.
func TestRuntimePage(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "act", "cfg", "procs", "ports", "sess", "view")
	viewer := s.memberKey(t, f, "viewer@example.com", "viewer")
	p := newTab(t, s.url)
	p.signIn(s.key)
	t.Run("actions", func(t *testing.T) { pageActions(t, s, p.in(t), f) })
	t.Run("config", func(t *testing.T) { pageConfig(t, s, p.in(t), f) })
	t.Run("processes", func(t *testing.T) { pageProcesses(t, s, p.in(t), f) })
	t.Run("ports", func(t *testing.T) { pagePorts(t, s, p.in(t), f) })
	t.Run("sessions", func(t *testing.T) { pageSessions(t, s, p.in(t), f) })
	t.Run("viewer", func(t *testing.T) { pageViewer(t, s, f, viewer) })
}

// pageActions pauses and resumes a running runtime from its page's
// header: the status there follows without a reload, and the API agrees.
func pageActions(t *testing.T, s *server, p *tab, f fleet) {
	id := f.runtimes["act"]
	s.startRuntime(t, f, "act")
	p.open(f.path("runtimes/" + id + "/overview"))
	p.waitFor("the header says running", headStatus+` === "running"`)
	eval[bool](p, `(window.__marker = "kept", true)`)

	p.click("Pause act", headAction("pause"))
	p.waitFor("the header says paused", headStatus+` === "paused"`)
	if rt := s.runtime(t, f, "act"); rt.Status != pc.RuntimePaused {
		t.Fatalf("the API says act is %s after the page paused it", rt.Status)
	}
	p.waitFor("a resume button in the header", headAction("resume")+` !== null && `+headAction("pause")+` === null`)
	if got := eval[string](p, accName+`(`+headAction("resume")+`)`); got != "Resume act" {
		t.Errorf("the header's resume button is named %q, want %q", got, "Resume act")
	}

	p.click("Resume act", headAction("resume"))
	p.waitFor("the header says running again", headStatus+` === "running"`)
	if rt := s.runtime(t, f, "act"); rt.Status != pc.RuntimeRunning {
		t.Fatalf("the API says act is %s after the page resumed it", rt.Status)
	}
	if got := eval[string](p, `String(window.__marker)`); got != "kept" {
		t.Fatalf("the page was reloaded or navigated away (window.__marker = %q)", got)
	}
}

// pageConfig changes a running runtime's idle timeout and memory in the
// config form: the answer says the idle timeout applies now and the
// memory at the next start, and the API reports both.
func pageConfig(t *testing.T, s *server, p *tab, f fleet) {
	id := f.runtimes["cfg"]
	s.startRuntime(t, f, "cfg")
	p.open(f.path("runtimes/" + id + "/config"))
	p.waitFor("the config form", `document.querySelector("#panel-config .config-form #cfg-memory_mb")?.value === "128"`)
	submit := `document.querySelector(".config-form button[type=submit]")`
	if !eval[bool](p, submit+`.disabled`) {
		t.Error("Save config is enabled before anything changed")
	}
	p.fill("cfg-idle_timeout_seconds", "777")
	p.fill("cfg-memory_mb", "192")
	p.waitFor("Save config enabled", `!`+submit+`.disabled`)
	p.click("Save config", submit)
	p.waitFor("the answer", `document.querySelector(".config-form .applied")`)
	applied := eval[string](p, `document.querySelector(".config-form .applied").innerText`)
	live, next, ok := strings.Cut(applied, "Applies at the next start:")
	if !ok || !strings.Contains(live, "Applied now:") || !strings.Contains(live, "idle_timeout_seconds") ||
		strings.Contains(live, "memory_mb") || !strings.Contains(next, "memory_mb") || strings.Contains(next, "idle_timeout") {
		t.Errorf("the answer reads %q; want idle_timeout_seconds applied now, memory_mb at the next start", applied)
	}
	rt := s.runtime(t, f, "cfg")
	if rt.Config.IdleTimeoutSeconds != 777 || rt.Config.MemoryMB != 192 {
		t.Errorf("the API reports idle timeout %d, memory %d; want 777, 192", rt.Config.IdleTimeoutSeconds, rt.Config.MemoryMB)
	}
	p.waitFor("the form showing the saved config", `document.getElementById("cfg-memory_mb").value === "192" && `+submit+`.disabled`)
}

// pageProcesses lists a background process started through the API and
// kills it from the page: its row goes (or says it exited), and the API
// no longer has it running.
func pageProcesses(t *testing.T, s *server, p *tab, f fleet) {
	id := f.runtimes["procs"]
	s.startRuntime(t, f, "procs")
	proc, err := s.sdk.Exec(t.Context(), f.org, f.ws, id, pc.ExecRequest{Argv: []string{"sleep", "300"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	p.open(f.path("runtimes/" + id + "/processes"))
	row := `document.querySelector('table[aria-label="Processes"] tr[data-process=` + jsString(proc.ID) + `]')`
	p.waitFor("sleep 300 listed", row+`?.textContent.includes("sleep 300")`)
	if got := eval[string](p, row+`.querySelector("td").textContent.trim()`); got != strconv.Itoa(proc.PID) {
		t.Errorf("the process's row shows pid %q, want %d", got, proc.PID)
	}
	kill := fmt.Sprintf("Send KILL to process %d", proc.PID)
	p.click(kill, button(kill))
	// A click that lands as the list refreshes under it can be lost: the
	// button is clicked again until the row no longer says running.
	testenv.WaitFor(t, "sleep 300 gone from the running", func() bool {
		return eval[bool](p, `(() => { const r = `+row+`; if (r === null || !r.textContent.includes("running")) return true; const b = `+button(kill)+`; if (b) b.click(); return false; })()`)
	})
	procs, err := s.sdk.ListProcesses(t.Context(), f.org, f.ws, id)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(procs, func(x pc.Process) bool { return x.ID == proc.ID }); i >= 0 && procs[i].Running {
		t.Errorf("the API still lists sleep 300 running: %+v", procs[i])
	}
}

// pagePorts starts busybox httpd in the sandbox and sees its port listed
// with a preview link; marked public from the page, the API reports it
// public and the link goes to the preview's own origin, not the console's.
func pagePorts(t *testing.T, s *server, p *tab, f fleet) {
	const port = 8080
	id := f.runtimes["ports"]
	s.startRuntime(t, f, "ports")
	if _, err := s.sdk.Exec(t.Context(), f.org, f.ws, id, pc.ExecRequest{
		Argv: []string{"httpd", "-f", "-p", strconv.Itoa(port), "-h", "/workspace"}, Background: true,
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		l, err := s.sdk.ListPorts(t.Context(), f.org, f.ws, id)
		if err == nil && !slices.ContainsFunc(l.Items, func(x pc.Port) bool { return x.Port == port && x.Listening }) {
			err = fmt.Errorf("port %d is not listed as listening: %+v", port, l.Items)
		}
		return err
	})
	p.open(f.path("runtimes/" + id + "/ports"))
	row := `document.querySelector('table[aria-label="Ports"] tr[data-port="8080"]')`
	p.waitFor("port 8080 listed, listening, with its preview", row+` && `+button("Open port 8080")+` !== null`)
	box := `document.getElementById("port-public-8080")`
	if eval[bool](p, box+`.checked`) {
		t.Fatal("port 8080 shows public before it was made public")
	}
	if got := eval[string](p, accName+`(`+box+`)`); got != "Port 8080 public" {
		t.Errorf("the public checkbox is named %q", got)
	}
	p.click("Port 8080 public", box)
	link := row + `.querySelector("a[href]")`
	p.waitFor("port 8080 public with its link", box+`.checked && `+link+`?.textContent.trim() === "Open port 8080"`)
	l, err := s.sdk.ListPorts(t.Context(), f.org, f.ws, id)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(l.Items, func(x pc.Port) bool { return x.Port == port })
	if i < 0 || !l.Items[i].Public {
		t.Fatalf("the API does not report port 8080 public: %+v", l.Items)
	}
	href := eval[string](p, link+`.href`)
	if href != l.Items[i].URL {
		t.Errorf("the preview link is %q, the API's preview URL %q", href, l.Items[i].URL)
	}
	if eval[bool](p, `new URL(`+link+`.href).origin === location.origin`) {
		t.Errorf("the preview link %q is on the console's origin", href)
	}
}

// pageSessions sends a prompt from the sessions tab to the test image's
// stand-in of Claude Code: its events show while the turn streams (under
// "New session", before the turn ends), and the session is listed.
func pageSessions(t *testing.T, s *server, p *tab, f fleet) {
	id := f.runtimes["sess"]
	ctx := t.Context()
	if _, err := s.sdk.CreateSecret(ctx, f.org, f.ws, pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sdk.ConfigureRuntime(ctx, f.org, f.ws, id, pc.RuntimePatch{Secrets: &[]string{"anthropic"}}); err != nil {
		t.Fatal(err)
	}
	s.startRuntime(t, f, "sess")
	p.open(f.path("runtimes/" + id + "/sessions"))
	p.waitFor("the prompt box", `document.getElementById("prompt-text") !== null`)
	p.settled("the sessions tab")
	// Each render of the transcript while the turn streams is noted: the
	// events must show before the turn ends, not only in the transcript
	// read after it.
	eval[bool](p, `(() => {
		window.__live = 0;
		new MutationObserver(() => {
			const h = [...document.querySelectorAll(".sessions h2")].some((e) => e.textContent.trim() === "New session");
			const n = document.querySelectorAll("ol.transcript li[data-seq]").length;
			if (h && n > window.__live) window.__live = n;
		}).observe(document.body, {subtree: true, childList: true, characterData: true});
		return true;
	})()`)
	p.fill("prompt-text", "list the workspace please")
	p.click("Send prompt", `document.querySelector(".prompt-box button[type=submit]")`)
	p.waitFor("the session listed", `document.querySelector('table[aria-label="Sessions"] tr[data-session]')`)
	p.waitFor("the turn's transcript, done", `[...document.querySelectorAll("ol.transcript li[data-seq]")].some((e) => e.textContent.startsWith("Done"))`)
	if n := eval[int](p, `window.__live`); n < 1 {
		t.Error("no event showed while the turn streamed")
	}
	text := eval[string](p, `document.querySelector("ol.transcript").innerText`)
	for _, want := range []string{"list the workspace please", "Tool call", "Usage"} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, text)
		}
	}
	l, err := s.sdk.ListSessions(ctx, f.org, f.ws, id, pc.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 {
		t.Fatalf("the API lists %d sessions, want 1", len(l.Items))
	}
	sid := l.Items[0].ID
	if !eval[bool](p, `document.querySelector('table[aria-label="Sessions"] tr[data-session=`+jsString(sid)+`]') !== null`) {
		t.Errorf("session %s is not the one listed", sid)
	}
}

// pageViewer signs a viewer in: a runtime's page has no action buttons,
// its config is read-only (disabled fields, no save), and axe-core finds
// no serious violation on either.
func pageViewer(t *testing.T, s *server, f fleet, key string) {
	id := f.runtimes["view"]
	p := newTab(t, s.url)
	p.signIn(key)
	p.open(f.path("runtimes/" + id + "/overview"))
	p.waitFor("the header says idle", headStatus+` === "idle"`)
	p.settled("the viewer's runtime page")
	if got := eval[[]string](p, `[...document.querySelectorAll(".page-head button")].map(`+accName+`)`); len(got) != 0 {
		t.Errorf("a viewer sees buttons in the runtime's header: %q", got)
	}
	p.axe("the viewer's runtime page")

	p.open(f.path("runtimes/" + id + "/config"))
	p.waitFor("the config form", `document.getElementById("cfg-memory_mb")?.value === "128"`)
	p.settled("the viewer's config tab")
	enabled := eval[[]string](p, `[...document.querySelectorAll("#panel-config input, #panel-config select, #panel-config textarea")].filter((e) => !e.matches(":disabled")).map((e) => e.id)`)
	if len(enabled) != 0 {
		t.Errorf("a viewer can edit config fields %q", enabled)
	}
	if eval[bool](p, `document.querySelector(".config-form button[type=submit]") !== null`) {
		t.Error("a viewer sees Save config")
	}
	if !strings.Contains(eval[string](p, `document.getElementById("panel-config").innerText`), "Read-only") {
		t.Error("the viewer's config tab does not say it is read-only")
	}
	p.axe("the viewer's config tab")
}
