package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// TestClaimWarmPassesHeldRows: while one transaction holds its claim of
// the oldest ready warm sandbox, uncommitted, a claim elsewhere (another
// replica's) takes the next one instead of waiting, and once none is left
// unheld it finds none. The guard deadline only ends the test if a claim
// waits on the held row, which is the failure.
func TestClaimWarmPassesHeldRows(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	tmpl := "held-" + uuid.NewString()
	var ids []string
	for i := range 2 {
		id := uuid.NewString()
		ids = append(ids, id)
		w := store.WarmSandbox{ID: id, Template: tmpl, State: store.WarmReady, Provider: "fake",
			WorkspaceVolume: "paddock-ws-" + id, CreatedAt: time.Date(2025, 6, 1, 12, 0, i, 0, time.UTC)}
		if err := s.CreateWarmSandbox(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	guard, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// The body reports by returning: a t.Fatal in it would leave the
	// transaction open.
	err := s.InTx(ctx, func(q store.Queries) error {
		held, err := q.ClaimWarmSandbox(ctx, tmpl)
		if err != nil || held.ID != ids[0] {
			return fmt.Errorf("claim in the transaction: %v, %v; want %s", held.ID, err, ids[0])
		}
		other, err := s.ClaimWarmSandbox(guard, tmpl)
		if err != nil || other.ID != ids[1] {
			return fmt.Errorf("claim beside a held one: %v, %v; want %s", other.ID, err, ids[1])
		}
		if _, err := s.ClaimWarmSandbox(guard, tmpl); !errdefs.IsNotFound(err) {
			return fmt.Errorf("claim with every row held or gone: %v; want not found", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if left, err := s.ListWarmSandboxes(ctx); err != nil || len(left) != 0 {
		t.Fatalf("after both claims: %d warm sandboxes left, %v", len(left), err)
	}
}
