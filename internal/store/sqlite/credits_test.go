package sqlite

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/store"
)

// TestListJournalSearchesFilterIndex checks that a journal listing
// filtered by sandbox, runtime or project searches the journal's index by
// that column, not the org's whole journal: it explains the statement
// ListJournal ran (the one it added to the read pool's statement cache).
func TestListJournalSearchesFilterIndex(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cache := st.queries.r.(dbExec).cache
	for _, tc := range []struct {
		f     store.JournalFilter
		index string
	}{
		{store.JournalFilter{OrgID: "o", SandboxID: "s", Kind: store.EntryRefund}, "credit_journal_sandbox"},
		{store.JournalFilter{OrgID: "o", RuntimeID: "r", WorkspaceID: "w"}, "credit_journal_runtime"},
		{store.JournalFilter{OrgID: "o", ProjectID: "p"}, "credit_journal_project"},
		{store.JournalFilter{OrgID: "o"}, "credit_journal_org"},
	} {
		before := cachedQueries(cache)
		if _, _, err := st.ListJournal(ctx, tc.f, store.Page{}); err != nil {
			t.Fatalf("ListJournal(%+v): %v", tc.f, err)
		}
		var ran []string
		for _, q := range cachedQueries(cache) {
			if !slices.Contains(before, q) {
				ran = append(ran, q)
			}
		}
		if len(ran) != 1 {
			t.Fatalf("ListJournal(%+v) prepared %d statements, want 1 of its own", tc.f, len(ran))
		}
		plan := explain(t, st, ran[0], 10) // ListJournal's parameters
		if !strings.Contains(plan, "USING INDEX "+tc.index+" ") {
			t.Errorf("ListJournal(%+v) plan %q, want a search of %s", tc.f, plan, tc.index)
		}
	}
}

// cachedQueries lists the texts c holds prepared.
func cachedQueries(c *stmtCache) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for q := range c.m {
		out = append(out, q)
	}
	return out
}

// explain returns SQLite's query plan for query, of params parameters,
// its steps joined by " | ".
func explain(t *testing.T, st *Store, query string, params int) string {
	t.Helper()
	rows, err := st.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, make([]any, params)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(steps, " | ")
}
