package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestCreateAdminKeyOnPostgres: an installation on PostgreSQL gets its
// way back in too: the admin command takes the store's DSN, as serve's
// --database does, and the key it prints is an installation admin key
// there.
func TestCreateAdminKeyOnPostgres(t *testing.T) {
	dsn := testenv.Postgres(t)
	var out bytes.Buffer
	if err := server.CreateAdminKey(t.Context(), t.TempDir(), dsn, "recovery", &out); err != nil {
		t.Fatal(err)
	}
	plain := keyRE.FindString(out.String())
	if plain == "" {
		t.Fatalf("CreateAdminKey printed %q", out.String())
	}
	st, err := store.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := st.GetAPIKeyByHash(t.Context(), auth.Hash(plain))
	if err != nil || k.Name != "recovery" || k.OrgID != "" || k.Role != "admin" {
		t.Fatalf("the key in the store: %+v %v; want the installation admin key %q", k, err, "recovery")
	}
	if err := server.CreateAdminKey(t.Context(), t.TempDir(), "mysql://x/y", "x", &out); err == nil || !strings.Contains(err.Error(), "mysql") {
		t.Fatalf("CreateAdminKey on a store this build does not offer: %v", err)
	}
}
