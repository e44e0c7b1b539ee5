package browser

import (
	"encoding/json"
	"slices"
	"testing"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// pick chooses value in the select with id as a user does, and waits
// until the URL's query says so.
func (p *tab) pick(id, value string) {
	p.t.Helper()
	eval[bool](p, `(() => {
		const s = document.getElementById(`+jsString(id)+`);
		s.focus();
		s.value = `+jsString(value)+`;
		s.dispatchEvent(new Event("input", {bubbles: true}));
		s.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`)
}

// ledgerRows is the sandbox ids of the ledger's rows, top to bottom, and
// their states.
func ledgerRows(p *tab) ([]string, []string) {
	rows := eval[[][2]string](p, `[...document.querySelectorAll('table[aria-label="Sandboxes"] tr[data-sandbox]')].map((r) => [r.dataset.sandbox, r.dataset.state])`)
	var ids, states []string
	for _, r := range rows {
		ids, states = append(ids, r[0]), append(states, r[1])
	}
	return ids, states
}

// TestLedgerFilters fills the ledger with the sandboxes of two runtimes
// in different states and filters it by state, kind and runtime: the
// rows are the API's for the same filter, newest first, and the filter
// is in the URL, so a reload keeps it.
func TestLedgerFilters(t *testing.T) {
	s := serve(t)
	f := ledgerFleet(t, s)
	api := func(filter pc.SandboxFilter) []string {
		t.Helper()
		l, err := s.sdk.ListSandboxes(t.Context(), f.org, filter)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, sb := range l.Items {
			ids = append(ids, sb.ID)
		}
		return ids
	}
	all := api(pc.SandboxFilter{})
	states := map[string]bool{}
	l, _ := s.sdk.ListSandboxes(t.Context(), f.org, pc.SandboxFilter{})
	for i, sb := range l.Items {
		states[sb.State] = true
		if i > 0 && sb.CreatedAt.After(l.Items[i-1].CreatedAt) {
			t.Fatalf("the API's ledger is not newest first: %v", l.Items)
		}
	}
	if len(states) < 2 {
		t.Fatalf("the sandboxes are all in one state %v; the test needs several", states)
	}

	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("ledger"))
	same := func(what string, want []string, state string) {
		t.Helper()
		p.waitFor(what, `(() => {
			const ids = [...document.querySelectorAll('table[aria-label="Sandboxes"] tr[data-sandbox]')].map((r) => r.dataset.sandbox);
			return JSON.stringify(ids) === `+jsString(jsonOf(want))+`;
		})()`)
		_, got := ledgerRows(p)
		for _, st := range got {
			if state != "" && st != state {
				t.Errorf("%s: a row in state %s", what, st)
			}
		}
	}
	same("every sandbox, newest first", all, "")

	p.pick("ledger-state", "paused")
	paused := api(pc.SandboxFilter{State: "paused"})
	if len(paused) == 0 || len(paused) == len(all) {
		t.Fatalf("the API has %d paused of %d sandboxes", len(paused), len(all))
	}
	same("the paused sandboxes", paused, "paused")
	if q := eval[string](p, `location.search`); q != "?state=paused" {
		t.Errorf("the URL's query is %q with the state filter", q)
	}

	p.pick("ledger-state", "")
	p.pick("ledger-runtime", f.runtimes["p1"])
	p1 := api(pc.SandboxFilter{RuntimeID: f.runtimes["p1"]})
	if len(p1) < 2 {
		t.Fatalf("the API has %d sandboxes of p1, want 2 (before and after its reset)", len(p1))
	}
	same("p1's sandboxes", p1, "")
	p.pick("ledger-kind", "task")
	p.waitFor("no task sandbox", `document.querySelector('table[aria-label="Sandboxes"] tr[data-sandbox]') === null && /No sandbox matches/.test(document.body.innerText)`)
	p.pick("ledger-kind", "runtime")
	same("p1's runtime sandboxes", api(pc.SandboxFilter{RuntimeID: f.runtimes["p1"], Kind: "runtime"}), "")

	// A reload keeps the filter: the selects and the rows.
	p.open(f.path("ledger") + eval[string](p, `location.search`))
	same("p1's runtime sandboxes after a reload", p1, "")
	sel := eval[[]string](p, `["ledger-state", "ledger-kind", "ledger-runtime"].map((id) => document.getElementById(id).value)`)
	if !slices.Equal(sel, []string{"", "runtime", f.runtimes["p1"]}) {
		t.Errorf("after a reload the filters read %q", sel)
	}
}

// jsonOf is v in JSON.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ledgerFleet is acme with p1 (started, reset, started again) and p2
// (started and paused): sandboxes in several states.
func ledgerFleet(t *testing.T, s *server) fleet {
	t.Helper()
	f := s.newFleet(t, "acme", "p1", "p2")
	s.startRuntime(t, f, "p1")
	if _, err := s.sdk.ResetRuntime(t.Context(), f.org, f.ws, f.runtimes["p1"], pc.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	s.startRuntime(t, f, "p1")
	s.startRuntime(t, f, "p2")
	if _, err := s.sdk.PauseRuntime(t.Context(), f.org, f.ws, f.runtimes["p2"]); err != nil {
		t.Fatal(err)
	}
	return f
}
