package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// testSecrets checks that secrets round-trip, are unique per scope, list
// per scope, update under a version check and delete.
func testSecrets(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	o := f.org()
	w := f.workspace(o)
	orgWide := store.Secret{
		ID: uuid.NewString(), OrgID: o.ID, Name: "openai", Env: "OPENAI_API_KEY",
		Brokered: true, Hosts: []string{"api.openai.com", "*.openai.com"},
		KeyID: "k1", Sealed: []byte{1, 2, 3}, CreatedAt: f.next(),
	}
	must(t, s.CreateSecret(f.ctx, orgWide))
	// The same name in a workspace is another secret.
	inWS := store.Secret{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: "openai", Env: "OPENAI_API_KEY",
		KeyID: "k1", Sealed: []byte{4}, CreatedAt: f.next()}
	must(t, s.CreateSecret(f.ctx, inWS))

	dup := orgWide
	dup.ID = uuid.NewString()
	if err := s.CreateSecret(f.ctx, dup); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("a second org secret named openai: %v, want a conflict", err)
	}

	got, err := s.GetSecret(f.ctx, orgWide.ID)
	must(t, err)
	want := orgWide
	want.Version = 1
	want.CreatedAt = want.CreatedAt.UTC().Truncate(1000)
	want.UpdatedAt = want.CreatedAt
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("get:\n got %+v\nwant %+v", got, want)
	}
	byName, err := s.GetSecretByName(f.ctx, o.ID, w.ID, "openai")
	must(t, err)
	if byName.ID != inWS.ID || byName.Hosts == nil || len(byName.Hosts) != 0 {
		t.Fatalf("by name in the workspace: %+v", byName)
	}
	if _, err := s.GetSecretByName(f.ctx, o.ID, w.ID, "nope"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("unknown name: %v", err)
	}

	list, next, err := s.ListSecrets(f.ctx, o.ID, "", store.Page{})
	must(t, err)
	if len(list) != 1 || list[0].ID != orgWide.ID || next != "" {
		t.Fatalf("org-wide list: %+v", list)
	}

	upd := got
	upd.Sealed, upd.KeyID, upd.Brokered, upd.Hosts, upd.UpdatedAt = []byte{9, 9}, "k2", false, nil, f.next()
	after, err := s.UpdateSecret(f.ctx, upd)
	must(t, err)
	if after.Version != 2 || string(after.Sealed) != "\x09\x09" || after.KeyID != "k2" || after.Brokered || after.Name != "openai" {
		t.Fatalf("updated: %+v", after)
	}
	if _, err := s.UpdateSecret(f.ctx, upd); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a stale update: %v", err)
	}

	all, err := s.AllSecrets(f.ctx)
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("all: %d secrets", len(all))
	}
	must(t, s.DeleteSecret(f.ctx, orgWide.ID))
	if _, err := s.GetSecret(f.ctx, orgWide.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	if err := s.DeleteSecret(f.ctx, orgWide.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted twice: %v", err)
	}
	t.Run("concurrent updates", func(t *testing.T) { testSecretUpdateRace(t, f, inWS.ID) })
}

// testSecretUpdateRace has many writers update secret id from the version
// they all read: exactly one wins, every other is told its version is
// stale, and the secret moved on by one version.
func testSecretUpdateRace(t *testing.T, f *fixture, id string) {
	s, ctx := f.s, f.ctx
	read, err := s.GetSecret(ctx, id)
	must(t, err)
	const writers = 12
	errs := race(writers, func(i int) error {
		u := read
		u.Sealed = []byte{byte(i)}
		_, err := s.UpdateSecret(ctx, u)
		return err
	})
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, store.ErrStale):
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	got, err := s.GetSecret(ctx, id)
	must(t, err)
	if won != 1 || got.Version != read.Version+1 {
		t.Fatalf("%d writers won, version %d; want 1 and version %d", won, got.Version, read.Version+1)
	}
}
