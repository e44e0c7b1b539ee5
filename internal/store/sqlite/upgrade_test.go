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
// runtimes, journal and secrets over HTTP, starts a runtime and makes a
// secret.
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
	// The paused runtime's compute went with v0.1.0's fake provider: a
	// reset and a start give it new compute under this build.
	paused := ws + "/runtimes/" + fx.Runtimes[1].ID
	env.MustKey(t, key, http.StatusOK, "POST", paused+"/reset", nil)
	var started struct{ Status string }
	env.MustKey(t, key, http.StatusOK, "POST", paused+"/start", nil).Decode(t, &started)
	if started.Status != "running" {
		t.Fatalf("the reset runtime started %s", started.Status)
	}

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
