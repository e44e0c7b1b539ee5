package browser

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// getJSON GETs path of the server's as the installation admin and
// decodes the answer into v.
func (s *server) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = bearer(s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// ids are the values of a data attribute of the rows css selects.
func ids(p *tab, css, attr string) []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll(`+jsString(css)+`)].map((r) => r.getAttribute(`+jsString(attr)+`))`)
}

// TestCreditsPage charges a runtime's compute and reads the credits page:
// the balance is the API's, the chart has the project's bars, the usage
// table's numbers are GET …/usage?interval=day's, and the journal and the
// holds are the API's rows.
func TestCreditsPage(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1", "p2")
	if _, err := s.sdk.GrantCredits(t.Context(), f.org, pc.GrantCreditsRequest{Amount: 50, IdempotencyKey: "browser-credits-test"}); err != nil {
		t.Fatal(err)
	}
	before, err := s.sdk.GetCredits(t.Context(), f.org)
	if err != nil {
		t.Fatal(err)
	}
	// A start prepays the first slice (a deduction); a pause settles it
	// (a refund of what did not run).
	s.startRuntime(t, f, "p1")
	if _, err := s.sdk.PauseRuntime(t.Context(), f.org, f.ws, f.runtimes["p1"]); err != nil {
		t.Fatal(err)
	}
	acct, err := s.sdk.GetCredits(t.Context(), f.org)
	if err != nil {
		t.Fatal(err)
	}
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("credits"))
	p.settled("credits")
	p.waitFor("the balance", exists("dd[data-balance]"))
	if got := balanceShown(p); got != acct.Balance || acct.Balance >= before.Balance {
		t.Errorf("the page shows a balance of %v, the API %v (%v before p1 ran)", got, acct.Balance, before.Balance)
	}
	shown := eval[string](p, `document.querySelector("dd[data-balance]").textContent`)
	if !strings.Contains(strings.ReplaceAll(shown, ",", ""), strconv.FormatFloat(acct.Balance, 'f', -1, 64)) {
		t.Errorf("the balance reads %q, want %v", shown, acct.Balance)
	}

	p.waitFor("p1's bars in the chart", exists(`svg.chart rect[data-project="p1"]`))
	if eval[bool](p, exists(`svg.chart rect[data-project="p2"]`)) {
		t.Error("the chart has bars for p2, which never ran")
	}
	var usage pc.Usage
	s.getJSON(t, "/api/v1/org/acme/usage?group_by=project&interval=day&from="+time.Now().UTC().AddDate(0, 0, -13).Format("2006-01-02")+"T00:00:00Z", &usage)
	usageTable(t, p, usage)

	var journal pc.List[pc.CreditEntry]
	s.getJSON(t, "/api/v1/org/acme/credits/journal", &journal)
	var want []string
	for _, e := range journal.Items {
		want = append(want, e.ID)
	}
	p.waitFor("the journal's rows", exists(`table[aria-label="Credit journal"] tr[data-entry]`))
	if got := ids(p, `table[aria-label="Credit journal"] tr[data-entry]`, "data-entry"); !slices.Equal(got, want) || len(want) < 3 {
		t.Errorf("the journal shows %q, the API has %q (want a grant, a deduction and a refund at least)", got, want)
	}
	var holds pc.List[struct {
		ID string `json:"id"`
	}]
	s.getJSON(t, "/api/v1/org/acme/credits/holds", &holds)
	want = nil
	for _, h := range holds.Items {
		want = append(want, h.ID)
	}
	if got := ids(p, `tr[data-hold]`, "data-hold"); !slices.Equal(got, want) {
		t.Errorf("the holds show %q, the API has %q", got, want)
	}
	if len(want) == 0 && !eval[bool](p, `/No credits are held/.test(document.body.innerText)`) {
		t.Error("no hold is open, and the page does not say so")
	}
}

// usageTable compares the "Usage by project and day" table with the
// API's usage: each project's net credits on each day.
func usageTable(t *testing.T, p *tab, usage pc.Usage) {
	t.Helper()
	p.click("Usage as a table", `document.querySelector("details.usage-table summary")`)
	table := `document.querySelector('table[aria-label="Usage by project and day"]')`
	cols := eval[[]string](p, `[...`+table+`.querySelectorAll("thead th")].map((c) => c.textContent.trim())`)
	cells := eval[map[string][]string](p, `Object.fromEntries([...`+table+`.querySelectorAll("tr[data-day]")].map((r) => [r.dataset.day, [...r.querySelectorAll("td")].map((c) => c.textContent.trim())]))`)
	if !slices.Contains(cols, "p1") {
		t.Fatalf("the usage table's columns are %q, want p1 among them", cols)
	}
	seen := 0
	for _, it := range usage.Items {
		if it.Day == nil || it.Net == 0 {
			continue
		}
		day := it.Day.UTC().Format("2006-01-02")
		col := slices.Index(cols, it.Name) - 1 // the first column is the day, a th
		row, ok := cells[day]
		if col < 0 || !ok || col >= len(row) {
			t.Errorf("the usage table has no cell for %s on %s (columns %q, rows %v)", it.Name, day, cols, cells)
			continue
		}
		got, err := strconv.ParseFloat(strings.ReplaceAll(row[col], ",", ""), 64)
		if err != nil || math.Abs(got-it.Net) > 1e-6 {
			t.Errorf("the usage table says %q for %s on %s, the API %v", row[col], it.Name, day, it.Net)
		}
		seen++
	}
	if seen == 0 {
		t.Errorf("the API's usage has no charge by a project and day: %+v", usage.Items)
	}
}
