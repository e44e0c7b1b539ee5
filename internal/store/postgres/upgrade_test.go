package postgres_test

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/upgradetest"
)

// TestUpgradeFromV010 loads the PostgreSQL dump of v0.1.0's installation
// (schema version 11) and opens it with this build's store, which
// migrates it forward: every record survives, read through the store as
// the server reads it; the keys still verify and the secret still opens.
func TestUpgradeFromV010(t *testing.T) {
	ctx := context.Background()
	fx := upgradetest.V010
	dsn := testDSN(t)
	fx.LoadPostgres(t, dsn)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatalf("open v0.1.0's database: %v", err)
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
	fx.Check(t, st)
}
