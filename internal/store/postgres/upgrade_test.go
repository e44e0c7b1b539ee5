package postgres_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/upgradetest"
)

// TestUpgradeFromV010 loads the PostgreSQL dump of v0.1.0's installation
// (schema version 11) and opens it with this build's store, which
// migrates it forward: every record survives, the keys' hashes still match
// their plaintexts and the secret still opens.
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
	if id, err := st.GetMeta(ctx, "instance_id"); err != nil || id != fx.InstanceID {
		t.Errorf("instance_id = %q, %v; want %q", id, err, fx.InstanceID)
	}
	// TODO: fx.Check(t, st) in place of the SQL below once the dialect
	// has GetRuntime, GetCreditAccount, ListJournal, GetAPIKeyByHash and
	// GetOrgMember (access.VerifyKey), GetSecret, GetSSHKey and
	// GetInvitation.
	db := st.Pool()
	checkRuntimes(t, db, fx)
	checkCredits(t, db, fx)
	checkKeys(t, db, fx)
	checkSecret(t, db, fx)
	var fp, invState string
	if err := db.QueryRow(ctx, "SELECT fingerprint FROM ssh_keys WHERE id = $1 AND user_id = $2", fx.SSHKey.ID, fx.SSHKey.UserID).Scan(&fp); err != nil || fp != fx.SSHKey.Fingerprint {
		t.Errorf("ssh key %s: %q, %v; want %q", fx.SSHKey.ID, fp, err, fx.SSHKey.Fingerprint)
	}
	if err := db.QueryRow(ctx, "SELECT state FROM invitations WHERE id = $1 AND email = $2", fx.Invitation.ID, fx.Invitation.Email).Scan(&invState); err != nil || invState != fx.Invitation.State {
		t.Errorf("invitation %s: %q, %v; want %q", fx.Invitation.ID, invState, err, fx.Invitation.State)
	}
}

// checkRuntimes checks the runtimes' rows (TODO: GetRuntime).
func checkRuntimes(t *testing.T, db *pgxpool.Pool, fx upgradetest.Fixture) {
	t.Helper()
	rows, _ := db.Query(context.Background(), "SELECT id, org_id, project_id, status, current_sandbox_id, config FROM runtimes ORDER BY created_at")
	rts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Runtime, error) {
		var rt store.Runtime
		var config string
		if err := r.Scan(&rt.ID, &rt.OrgID, &rt.ProjectID, &rt.Status, &rt.CurrentSandboxID, &config); err != nil {
			return rt, err
		}
		return rt, json.Unmarshal([]byte(config), &rt.Config)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rts) != len(fx.Runtimes) {
		t.Errorf("%d runtimes, want %d", len(rts), len(fx.Runtimes))
	}
	for _, rt := range rts {
		fx.CheckRuntime(t, rt)
	}
}

// checkCredits checks the credit account and every journal entry
// (TODO: GetCreditAccount, ListJournal).
func checkCredits(t *testing.T, db *pgxpool.Pool, fx upgradetest.Fixture) {
	t.Helper()
	ctx := context.Background()
	var balance, held int64
	if err := db.QueryRow(ctx, "SELECT balance_micros, held_micros FROM credit_accounts WHERE org_id = $1", fx.OrgID).Scan(&balance, &held); err != nil || balance != fx.Balance || held != fx.Held {
		t.Errorf("credit account: balance %d, held %d, %v; want %d, %d", balance, held, err, fx.Balance, fx.Held)
	}
	rows, _ := db.Query(ctx, `SELECT id, seq, org_id, kind, amount_micros, held_micros, balance_after_micros,
		sandbox_id, idempotency_key, created_at FROM credit_journal WHERE org_id = $1 ORDER BY seq DESC`, fx.OrgID)
	journal, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.JournalEntry, error) {
		var e store.JournalEntry
		return e, r.Scan(&e.ID, &e.Seq, &e.OrgID, &e.Kind, &e.AmountMicros, &e.HeldMicros, &e.BalanceAfterMicros,
			&e.SandboxID, &e.IdempotencyKey, &e.CreatedAt)
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.CheckJournal(t, journal)
}

// checkKeys checks that each key's stored hash is its plaintext's, the key
// unrevoked and unexpired (TODO: access.VerifyKey on GetAPIKeyByHash).
func checkKeys(t *testing.T, db *pgxpool.Pool, fx upgradetest.Fixture) {
	t.Helper()
	for _, k := range []upgradetest.Key{fx.Key, fx.AdminKey} {
		var id, orgID, userID, role string
		err := db.QueryRow(context.Background(), `SELECT id, COALESCE(org_id, ''), COALESCE(user_id, ''), role FROM api_keys
			WHERE hash = $1 AND revoked_at IS NULL AND expires_at IS NULL`, auth.Hash(k.Plaintext)).Scan(&id, &orgID, &userID, &role)
		if err != nil || id != k.ID || orgID != k.OrgID || userID != k.UserID || role != k.Role {
			t.Errorf("key %s: %s %q %q %q, %v; want %+v", k.ID, id, orgID, userID, role, err, k)
		}
	}
}

// checkSecret checks that the secret opens under the fixture's key
// (TODO: GetSecret).
func checkSecret(t *testing.T, db *pgxpool.Pool, fx upgradetest.Fixture) {
	t.Helper()
	var s store.Secret
	if err := db.QueryRow(context.Background(), "SELECT id, org_id, workspace_id, name, env, key_id, sealed FROM secrets WHERE id = $1",
		fx.Secret.ID).Scan(&s.ID, &s.OrgID, &s.WorkspaceID, &s.Name, &s.Env, &s.KeyID, &s.Sealed); err != nil {
		t.Fatal(err)
	}
	fx.CheckSecret(t, s)
}
