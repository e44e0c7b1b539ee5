package postgres_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
)

// TestJournalIsAppendOnly holds the database itself to the journal's
// promise: no statement, from the store or beside it, changes or deletes
// an entry.
func TestJournalIsAppendOnly(t *testing.T) {
	s := openTest(t).(*postgres.Store)
	ctx := t.Context()
	o := store.Org{ID: uuid.NewString(), Name: "append-only"}
	if err := s.CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	e, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 5, IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE credit_journal SET amount_micros = 500 WHERE seq = $1",
		"DELETE FROM credit_journal WHERE seq = $1",
	} {
		if _, err := s.Pool().Exec(ctx, stmt, e.Seq); err == nil {
			t.Fatalf("%s: the journal allowed it", stmt)
		}
	}
	got, err := s.GetJournalEntryByKey(ctx, o.ID, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got != e {
		t.Fatalf("entry = %+v, want %+v", got, e)
	}
}
