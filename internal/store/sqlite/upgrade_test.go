package sqlite_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/store/upgradetest"
)

// TestUpgradeFromV010 opens the data directory paddock v0.1.0 made with
// this build's store, which migrates it forward: every record survives,
// the keys still authenticate and the secret still opens.
func TestUpgradeFromV010(t *testing.T) {
	ctx := context.Background()
	fx := upgradetest.V010
	st, err := sqlite.Open(ctx, filepath.Join(fx.DataDir(t), "paddock.db"), nil)
	if err != nil {
		t.Fatalf("open v0.1.0's store: %v", err)
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
	fx.Check(t, st)
}

// TestUpgradedServerServes starts this build's server on the data
// directory v0.1.0 made: the user's key made by v0.1.0 reads its org's
// runtimes, journal and secrets over HTTP, starts its runtimes (the
// server opens the bound secret for the sandbox) and makes a secret.
func TestUpgradedServerServes(t *testing.T) {
	fx := upgradetest.V010
	env := servertest.New(t, servertest.Options{DataDir: fx.DataDir(t)})
	key := fx.Key.Plaintext

	var me struct {
		User struct{ ID string } `json:"user"`
	}
	env.MustKey(t, key, http.StatusOK, "GET", "/api/v1/me", nil).Decode(t, &me)
	if me.User.ID != fx.Key.UserID {
		t.Fatalf("the v0.1.0 key is user %q, want %q", me.User.ID, fx.Key.UserID)
	}

	ws := fmt.Sprintf("/api/v1/org/%s/ws/%s", fx.OrgName, fx.Workspace)
	var runtimes struct {
		Items []struct{ ID, Status string } `json:"items"`
	}
	env.MustKey(t, key, http.StatusOK, "GET", ws+"/runtimes", nil).Decode(t, &runtimes)
	for _, want := range fx.Runtimes {
		if !slices.ContainsFunc(runtimes.Items, func(r struct{ ID, Status string }) bool {
			return r.ID == want.ID && r.Status == string(want.Status)
		}) {
			t.Errorf("runtime %s (%s) is not listed: %+v", want.ID, want.Status, runtimes.Items)
		}
	}
	startAgain(t, env, key, ws)

	var journal struct {
		Items []struct{ Seq int64 } `json:"items"`
	}
	env.MustKey(t, key, http.StatusOK, "GET", "/api/v1/org/"+fx.OrgName+"/credits/journal?limit=100", nil).Decode(t, &journal)
	for _, want := range fx.Journal {
		if !slices.ContainsFunc(journal.Items, func(e struct{ Seq int64 }) bool { return e.Seq == want.Seq }) {
			t.Errorf("journal entry %d is not listed", want.Seq)
		}
	}

	env.MustKey(t, key, http.StatusOK, "GET", ws+"/secrets/"+fx.Secret.Name, nil)
	env.MustKey(t, key, http.StatusCreated, "POST", ws+"/secrets",
		map[string]any{"name": "after-upgrade", "value": "v"})
}

// startAgain starts the fixture's runtimes, whose compute went with
// v0.1.0's fake provider: a reset and a start give them new compute under
// this build, and the server opens the secret bound to one (under the data
// directory's key) for its sandbox's environment.
func startAgain(t *testing.T, env *servertest.Env, key, ws string) {
	t.Helper()
	fx := upgradetest.V010
	for _, rt := range fx.Runtimes {
		path := ws + "/runtimes/" + rt.ID
		env.MustKey(t, key, http.StatusOK, "POST", path+"/reset", nil)
		var started struct {
			Status           string
			CurrentSandboxID string `json:"current_sandbox_id"`
		}
		env.MustKey(t, key, http.StatusOK, "POST", path+"/start", nil).Decode(t, &started)
		if started.Status != "running" {
			t.Fatalf("runtime %s started %s", rt.ID, started.Status)
		}
		if !slices.Contains(rt.Config.Secrets, fx.Secret.Name) {
			continue
		}
		sb, err := env.Store.GetSandbox(context.Background(), started.CurrentSandboxID)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := env.Secrets.Env(context.Background(), sb)
		if err != nil || vars[fx.Secret.Env] != fx.Secret.Value {
			t.Errorf("sandbox environment %v, %v; want %s=%q", vars, err, fx.Secret.Env, fx.Secret.Value)
		}
	}
}
