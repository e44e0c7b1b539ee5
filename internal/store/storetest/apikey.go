package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func hashOf(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

func testAPIKeys(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	n, err := s.CountAPIKeys(ctx)
	must(t, err)
	equal(t, "keys in an empty store", n, 0)

	o := f.org()
	global := store.APIKey{ID: uuid.NewString(), Name: "bootstrap", Hash: hashOf("pdk_one"), Prefix: "pdk_one", Role: "admin", CreatedAt: f.next()}
	scoped := store.APIKey{ID: uuid.NewString(), Name: "ci", Hash: hashOf("pdk_two"), Prefix: "pdk_two", Role: "admin", OrgID: o.ID, CreatedAt: f.next()}

	creates := []struct {
		name    string
		key     store.APIKey
		wantErr error
	}{
		{"installation-wide", global, nil},
		{"org scoped", scoped, nil},
		{"duplicate hash", store.APIKey{ID: uuid.NewString(), Hash: global.Hash, Role: "admin", CreatedAt: base}, errdefs.ErrConflict},
		{"duplicate id", store.APIKey{ID: global.ID, Hash: hashOf("pdk_three"), Role: "admin", CreatedAt: base}, errdefs.ErrConflict},
		{"unknown org", store.APIKey{ID: uuid.NewString(), Hash: hashOf("pdk_four"), Role: "admin", OrgID: uuid.NewString(), CreatedAt: base}, errdefs.ErrFailedPrecondition},
		{"missing hash", store.APIKey{ID: uuid.NewString(), Role: "admin", CreatedAt: base}, errdefs.ErrInvalidArgument},
		{"missing id", store.APIKey{Hash: hashOf("pdk_five"), Role: "admin", CreatedAt: base}, errdefs.ErrInvalidArgument},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			wantKind(t, s.CreateAPIKey(ctx, tc.key), tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			got, err := s.GetAPIKeyByHash(ctx, tc.key.Hash)
			must(t, err)
			equal(t, "GetAPIKeyByHash", got, normAPIKey(tc.key))
		})
	}

	t.Run("count", func(t *testing.T) {
		n, err := s.CountAPIKeys(ctx)
		must(t, err)
		equal(t, "key count", n, 2)
	})

	t.Run("unknown hash", func(t *testing.T) {
		_, err := s.GetAPIKeyByHash(ctx, hashOf("pdk_unknown"))
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetAPIKeyByHash(ctx, "")
		wantKind(t, err, errdefs.ErrNotFound)
	})
}
