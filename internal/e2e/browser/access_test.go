package browser

import (
	"fmt"
	"strings"
	"testing"
)

// TestViewerReadOnly signs a viewer in: the runtimes table shows the
// runtime with no start button, and the API refuses the start with 403
// when the page calls it directly, with the session's CSRF token and
// with the viewer's own key.
func TestViewerReadOnly(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	viewer := s.memberKey(t, f, "viewer@example.com", "viewer")
	p := newTab(t, s.url)
	p.signIn(viewer)
	p.open(f.path("runtimes"))
	row := jsString(runtimeRow(id))
	p.waitFor("the row of p1", `document.querySelector(`+row+`) !== null`)
	if buttons := eval[[]string](p, `[...document.querySelectorAll(`+row+` + " button")].map(`+accName+`)`); len(buttons) != 0 {
		t.Errorf("a viewer sees buttons in p1's row: %q", buttons)
	}
	if eval[bool](p, button("Start p1")+` !== null`) {
		t.Error("a viewer sees a Start p1 button")
	}

	start := "/api/v1/org/acme/ws/default/runtimes/" + id + "/start"
	withCSRF := eval[int](p, fmt.Sprintf(`(async () => {
		const s = await (await fetch("/api/v1/console/session")).json();
		const r = await fetch(%s, {method: "POST", headers: {"X-CSRF-Token": s.csrf_token, "Content-Type": "application/json"}, body: "{}"});
		return r.status;
	})()`, jsString(start)))
	if withCSRF != 403 {
		t.Errorf("the viewer's session with its CSRF token starting p1: %d, want 403", withCSRF)
	}
	withKey := eval[int](p, fmt.Sprintf(`(async () => {
		const r = await fetch(%s, {method: "POST", credentials: "omit", headers: {"Authorization": "Bearer " + %s, "Content-Type": "application/json"}, body: "{}"});
		return r.status;
	})()`, jsString(start), jsString(viewer)))
	if withKey != 403 {
		t.Errorf("the viewer's key starting p1 from the page: %d, want 403", withKey)
	}
	if rt := s.runtime(t, f, "p1"); rt.Status != "idle" {
		t.Errorf("p1 is %s after the viewer's attempts, want idle", rt.Status)
	}
}

// TestOtherOrgInvisible signs in an admin of one org and finds no trace
// of another org's runtime: not in the table, not in the event stream
// while that runtime starts and pauses. A start of the admin's own
// runtime, after, arrives on the same stream: had the other's events
// been sent, they would have come first.
func TestOtherOrgInvisible(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	other := s.newFleet(t, "globex", "hidden-project")
	otherID := other.runtimes["hidden-project"]
	admin := s.memberKey(t, f, "admin@acme.example", "admin")
	p := newTab(t, s.url)
	p.signIn(admin)
	p.open(f.path("runtimes"))
	p.waitFor("the row of p1", `document.querySelector(`+jsString(runtimeRow(f.runtimes["p1"]))+`) !== null`)

	eval[bool](p, `(() => {
		window.__events = [];
		const es = new EventSource("/api/v1/events");
		for (const type of ["runtime", "egress", "provision", "message"]) {
			es.addEventListener(type, (e) => window.__events.push(type + " " + e.data));
		}
		window.__stream = es;
		return true;
	})()`)
	p.waitFor("the event stream open", `window.__stream.readyState === EventSource.OPEN`)

	s.startRuntime(t, other, "hidden-project")
	if _, err := s.sdk.PauseRuntime(t.Context(), other.org, other.ws, otherID); err != nil {
		t.Fatal(err)
	}
	s.startRuntime(t, f, "p1")
	p.waitFor("p1's start on the stream", `window.__events.some((e) => e.includes(`+jsString(f.runtimes["p1"])+`) && e.includes('"running"'))`)

	events := eval[[]string](p, `window.__events`)
	for _, e := range events {
		if strings.Contains(e, otherID) || strings.Contains(e, "globex") || strings.Contains(e, "hidden-project") {
			t.Errorf("acme's admin received an event of globex's: %s", e)
		}
	}
	text := eval[string](p, `document.body.innerText`)
	if strings.Contains(text, "hidden-project") || strings.Contains(text, "globex") {
		t.Errorf("acme's admin sees globex on the page:\n%s", text)
	}
	if eval[bool](p, `document.querySelector(`+jsString(runtimeRow(otherID))+`) !== null`) {
		t.Error("globex's runtime has a row in acme's table")
	}
}
