// Package upgradetest holds what an upgrade must keep of an installation a
// previous release of paddock made: the data directory of v0.1.0 kept in
// internal/store/testdata/v0.1.0 (its README.txt says how it was made),
// the facts about it a test checks after this build's store has migrated
// it, and the checks themselves, through the store.Store API.
package upgradetest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
)

// Fixture is an installation a previous release made, as that release
// left it: the records a test expects to find after the upgrade.
type Fixture struct {
	Dir        string // the fixture's directory
	InstanceID string
	OrgID      string
	OrgName    string
	Workspace  string          // the name of the runtimes' workspace
	Runtimes   []store.Runtime // ID, ProjectID, Status, CurrentSandboxID and Config
	Balance    int64           // micro-credits
	Held       int64
	Journal    []store.JournalEntry // Seq, Kind, AmountMicros, HeldMicros, BalanceAfterMicros, SandboxID
	Key        Key                  // an org key a user made
	AdminKey   Key                  // the installation admin key
	Secret     Secret
	SSHKey     store.SSHKey     // ID, UserID, Fingerprint, Name
	Invitation store.Invitation // ID, OrgID, Email, Role, State
}

// Key is an API key and the plaintext its holder kept.
type Key struct {
	ID, Plaintext, OrgID, UserID, Role string
}

// Secret is a sealed secret and the value it was made with.
type Secret struct {
	ID, OrgID, WorkspaceID, Name, Env, Value string
}

// V010 is the installation paddock v0.1.0 made (schema version 11).
var V010 = Fixture{
	Dir:        filepath.Join(here(), "..", "testdata", "v0.1.0"),
	InstanceID: "9bf09ce6-580f-4377-a7d7-671879c27873",
	OrgID:      org,
	OrgName:    "acme",
	Workspace:  "dev",
	Runtimes: []store.Runtime{{
		ID: "ae9448d3-6978-4bc3-9b17-9ba1e107f5b9", ProjectID: "2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42",
		Status: store.RuntimeRunning, CurrentSandboxID: sandboxAgent,
		Config: store.RuntimeConfig{Image: "paddock/debian:bookworm", Provider: "fake", CPUMillis: 1000, MemoryMB: 1024,
			PidsLimit: 256, DiskMB: 10240, IdleTimeoutSeconds: 900, Secrets: []string{"api-token"}, RootFS: "readonly"},
	}, {
		ID: "7fbb444e-e319-4d81-ab69-76cc6b127752", ProjectID: "79c7f78f-8b21-48f5-a440-c63549b8ca0a",
		Status: store.RuntimePaused, CurrentSandboxID: sandboxBatch,
		Config: store.RuntimeConfig{Image: "paddock/debian:bookworm", Provider: "fake", CPUMillis: 500, MemoryMB: 512,
			PidsLimit: 256, DiskMB: 10240, IdleTimeoutSeconds: 1800, RootFS: "readonly"},
	}},
	Balance: 349_973_154,
	Journal: []store.JournalEntry{
		entry(1, store.EntryGrant, 100_000_000, 0, 100_000_000, ""),
		entry(2, store.EntryHold, 0, 21_000, 100_000_000, sandboxAgent),
		entry(3, store.EntryDeduction, -21_000, -21_000, 99_979_000, sandboxAgent),
		entry(4, store.EntryHold, 0, 10_500, 99_979_000, sandboxBatch),
		entry(5, store.EntryDeduction, -10_500, -10_500, 99_968_500, sandboxBatch),
		entry(6, store.EntryGrant, 250_000_000, 0, 349_968_500, ""),
		entry(7, store.EntryRefund, 9_330, 0, 349_977_830, sandboxBatch),
		entry(8, store.EntryDeduction, -479, 0, 349_977_351, sandboxAgent),
		entry(9, store.EntryDeduction, -700, 0, 349_976_651, sandboxAgent),
		entry(10, store.EntryDeduction, -700, 0, 349_975_951, sandboxAgent),
		entry(11, store.EntryDeduction, -699, 0, 349_975_252, sandboxAgent),
		entry(12, store.EntryDeduction, -704, 0, 349_974_548, sandboxAgent),
		entry(13, store.EntryDeduction, -698, 0, 349_973_850, sandboxAgent),
		entry(14, store.EntryDeduction, -696, 0, 349_973_154, sandboxAgent),
	},
	Key: Key{ID: "5cc2a400-6542-4d12-bc1c-7932cb347eac", Plaintext: "pdk_0d832c01b278fb7a0bb7202ba24a8fa3217abe0c5e98b48b",
		OrgID: org, UserID: ann, Role: "owner"},
	AdminKey: Key{ID: "1c5197e7-7f52-49d1-94e4-f1d9691db6f9", Plaintext: "pdk_0000000000000000000000000000000000000000000000a1", Role: "admin"},
	Secret: Secret{ID: "7b448a0d-4867-4742-837f-b04fc2591e4c", OrgID: org, WorkspaceID: "6feaea40-769a-48c3-811b-057262ee9936",
		Name: "api-token", Env: "API_TOKEN", Value: "fixture-secret-value-v0.1.0"},
	SSHKey: store.SSHKey{ID: "25311bc0-2d5b-467f-9b78-2a207cc66cb0", UserID: ann, Name: "ann-laptop",
		Fingerprint: "SHA256:a/YhqFJvK1RavT/fBbL7o1Iu8Ju5wvMIlB9Z55F05tg"},
	Invitation: store.Invitation{ID: "c2d3d840-c574-4f7e-bd94-66e26c4c057c", OrgID: org, Email: "carol@example.com",
		Role: "member", State: "pending"},
}

const (
	org          = "11509d52-f0ad-4719-94e2-c42cbbe00951"
	ann          = "25c6b838-5c93-4cfd-94dd-76e44e19acb6"
	sandboxAgent = "7d1a1c20-3f39-4b5e-a064-153cb3f4e486"
	sandboxBatch = "80a41d17-fd8d-47ea-b06e-3feb5f12fe47"
)

func entry(seq int64, kind store.EntryKind, amount, held, after int64, sandbox string) store.JournalEntry {
	return store.JournalEntry{Seq: seq, OrgID: org, Kind: kind, AmountMicros: amount, HeldMicros: held,
		BalanceAfterMicros: after, SandboxID: sandbox}
}

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// DataDir copies the fixture's SQLite data directory (paddock.db and
// secrets.key) into a fresh directory of the test's and returns it: the
// migration then changes the copy, never the fixture.
func (f Fixture) DataDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"paddock.db", secrets.KeyFile} {
		b, err := os.ReadFile(filepath.Join(f.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// LoadPostgres loads the fixture's PostgreSQL dump (plain SQL, rows as
// INSERTs) into the empty database dsn names.
func (f Fixture) LoadPostgres(t testing.TB, dsn string) {
	t.Helper()
	ctx := context.Background()
	dump, err := os.ReadFile(filepath.Join(f.Dir, "postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Without arguments Exec sends the whole script in one simple query.
	if _, err := conn.Exec(ctx, string(dump)); err != nil {
		t.Fatalf("load postgres.sql: %v", err)
	}
}

// Keyring opens the fixture's secrets key.
func (f Fixture) Keyring(t testing.TB) *secrets.Keyring {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.Dir, secrets.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.LoadKeyring("", string(b))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Check checks through st's API that the upgraded store holds every
// record of the fixture: its runtimes, the credit account and every
// journal entry, its keys (which still authenticate), its secret (which
// still opens under the fixture's key), its SSH key and invitation.
func (f Fixture) Check(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	if id, err := st.GetMeta(ctx, "instance_id"); err != nil || id != f.InstanceID {
		t.Errorf("instance_id = %q, %v; want %q", id, err, f.InstanceID)
	}
	for _, want := range f.Runtimes {
		got, err := st.GetRuntime(ctx, want.ID)
		if err != nil {
			t.Errorf("runtime %s: %v", want.ID, err)
			continue
		}
		f.CheckRuntime(t, got)
	}
	acct, err := st.GetCreditAccount(ctx, f.OrgID)
	if err != nil || acct.BalanceMicros != f.Balance || acct.HeldMicros != f.Held {
		t.Errorf("credit account = %+v, %v; want balance %d, held %d", acct, err, f.Balance, f.Held)
	}
	journal, _, err := st.ListJournal(ctx, store.JournalFilter{OrgID: f.OrgID}, store.Page{Limit: 100})
	if err != nil {
		t.Fatalf("list journal: %v", err)
	}
	f.CheckJournal(t, journal)
	f.checkKeys(t, st)
	sec, err := st.GetSecret(ctx, f.Secret.ID)
	if err != nil {
		t.Fatalf("get secret: %v", err)
	}
	f.CheckSecret(t, sec)
	if k, err := st.GetSSHKey(ctx, f.SSHKey.ID); err != nil || k.UserID != f.SSHKey.UserID || k.Fingerprint != f.SSHKey.Fingerprint || k.Name != f.SSHKey.Name {
		t.Errorf("ssh key = %+v, %v; want %+v", k, err, f.SSHKey)
	}
	inv, err := st.GetInvitation(ctx, f.Invitation.ID)
	if err != nil || inv.OrgID != f.Invitation.OrgID || inv.Email != f.Invitation.Email || inv.Role != f.Invitation.Role || inv.State != f.Invitation.State {
		t.Errorf("invitation = %+v, %v; want %+v", inv, err, f.Invitation)
	}
}

// CheckRuntime checks one upgraded runtime against the fixture's.
func (f Fixture) CheckRuntime(t *testing.T, got store.Runtime) {
	t.Helper()
	i := slices.IndexFunc(f.Runtimes, func(r store.Runtime) bool { return r.ID == got.ID })
	if i < 0 {
		t.Errorf("runtime %s is not the fixture's", got.ID)
		return
	}
	want := f.Runtimes[i]
	c, wc := got.Config, want.Config
	if got.OrgID != f.OrgID || got.ProjectID != want.ProjectID || got.Status != want.Status || got.CurrentSandboxID != want.CurrentSandboxID ||
		c.Image != wc.Image || c.Provider != wc.Provider || c.CPUMillis != wc.CPUMillis || c.MemoryMB != wc.MemoryMB ||
		c.PidsLimit != wc.PidsLimit || c.DiskMB != wc.DiskMB || c.IdleTimeoutSeconds != wc.IdleTimeoutSeconds ||
		!slices.Equal(c.Secrets, wc.Secrets) || c.RootFS != wc.RootFS || c.Network.Mode != "none" {
		t.Errorf("runtime %s = %+v\nwant %+v", got.ID, got, want)
	}
}

// CheckJournal checks that the journal, newest entry first as ListJournal
// gives it, is the fixture's, entry for entry.
func (f Fixture) CheckJournal(t *testing.T, got []store.JournalEntry) {
	t.Helper()
	if len(got) != len(f.Journal) {
		t.Errorf("journal has %d entries, want %d", len(got), len(f.Journal))
		return
	}
	for i, want := range f.Journal {
		g := got[len(got)-1-i]
		if g.Seq != want.Seq || g.OrgID != want.OrgID || g.Kind != want.Kind || g.AmountMicros != want.AmountMicros ||
			g.HeldMicros != want.HeldMicros || g.BalanceAfterMicros != want.BalanceAfterMicros || g.SandboxID != want.SandboxID ||
			g.ID == "" || g.IdempotencyKey == "" || g.CreatedAt.IsZero() {
			t.Errorf("journal entry %d = %+v\nwant %+v", want.Seq, g, want)
		}
	}
}

// checkKeys checks that the fixture's keys still authenticate, with the
// principal they were made for.
func (f Fixture) checkKeys(t *testing.T, st store.Store) {
	t.Helper()
	iam := access.New(access.Config{Store: st})
	for _, k := range []Key{f.Key, f.AdminKey} {
		p, err := iam.VerifyKey(context.Background(), k.Plaintext)
		if err != nil {
			t.Errorf("key %s no longer authenticates: %v", k.ID, err)
			continue
		}
		if p.KeyID != k.ID || p.OrgID != k.OrgID || p.UserID != k.UserID || string(p.Role) != k.Role || p.Installation != (k.OrgID == "") {
			t.Errorf("key %s authenticates as %+v, want %+v", k.ID, p, k)
		}
	}
}

// CheckSecret checks that the upgraded secret is the fixture's and opens
// under the fixture's key to the value it was made with.
func (f Fixture) CheckSecret(t *testing.T, got store.Secret) {
	t.Helper()
	want := f.Secret
	if got.ID != want.ID || got.OrgID != want.OrgID || got.WorkspaceID != want.WorkspaceID || got.Name != want.Name || got.Env != want.Env {
		t.Errorf("secret = %+v, want %+v", got, want)
	}
	v, err := f.Keyring(t).Open(got)
	if err != nil || string(v) != want.Value {
		t.Errorf("secret opens to %q, %v; want %q", v, err, want.Value)
	}
}
