package secrets

import (
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
)

// TestRotateResealsHostKeys: a rotation seals the registered machines'
// private keys again under the new key, so they open once the old key is
// gone.
func TestRotateResealsHostKeys(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h := store.Host{ID: uuid.NewString(), OrgID: f.org, Name: "box", Address: "10.0.0.1:22", User: "root",
		HostKey: "ssh-ed25519 AAAA", DockerSocket: "/var/run/docker.sock", RunDir: "/run/paddock", DiskDir: "/var/lib/paddock/disks"}
	sec := HostKeySecret(h)
	if err := f.keys.Seal(&sec, []byte("the private key")); err != nil {
		t.Fatal(err)
	}
	h.KeyID, h.SealedKey = sec.KeyID, sec.Sealed
	if err := f.st.CreateHost(ctx, h); err != nil {
		t.Fatal(err)
	}
	r, err := Rotate(ctx, f.st, f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Hosts != 1 {
		t.Fatalf("rotation: %+v", r)
	}
	got, err := f.st.GetHost(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := LoadKeyring(f.dir, "") // the new key only
	if err != nil {
		t.Fatal(err)
	}
	if got.KeyID != r.KeyID {
		t.Fatalf("the host's key is under %s, want %s", got.KeyID, r.KeyID)
	}
	v, err := fresh.Open(HostKeySecret(got))
	if err != nil || string(v) != "the private key" {
		t.Fatalf("open after the rotation: %q %v", v, err)
	}
}
