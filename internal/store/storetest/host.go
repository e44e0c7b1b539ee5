package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// host stores a host named name of o.
func (f *fixture) host(o store.Org, name string) store.Host {
	f.t.Helper()
	h := store.Host{
		ID: uuid.NewString(), OrgID: o.ID, Name: name, Address: "10.0.0.1:22", User: "root",
		HostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample", KeyID: "k1", SealedKey: []byte{1, 2, 3},
		DockerSocket: "/var/run/docker.sock", RunDir: "/run/paddock", DiskDir: "/var/lib/paddock/disks",
		IdleTeardown: 90 * time.Second, TeardownCommand: "poweroff", CostPerHourMicros: 1_500_000,
		Mode: store.HostContainer, CreatedBy: "key:x", CreatedAt: f.next(),
	}
	must(f.t, f.s.CreateHost(f.ctx, h))
	h.CreatedAt = ts(h.CreatedAt)
	h.State, h.LastUsedAt = store.HostReady, h.CreatedAt
	return h
}

func testHosts(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()
	a, b, c := f.host(o, "a"), f.host(o, "b"), f.host(o, "c")
	d := f.host(other, "a") // a name is per org

	got, err := s.GetHost(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	got, err = s.GetHostByName(ctx, other.ID, "a")
	must(t, err)
	equal(t, "by name", got, d)
	if _, err := s.GetHostByName(ctx, other.ID, "b"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("another org's name: err = %v, want not found", err)
	}
	dup := a
	dup.ID = uuid.NewString()
	if err := s.CreateHost(ctx, dup); !isCode(err, "host_exists") {
		t.Fatalf("a taken name: err = %v, want host_exists", err)
	}
	if err := s.CreateHost(ctx, store.Host{ID: uuid.NewString(), OrgID: o.ID, Name: "k"}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no address: err = %v, want invalid argument", err)
	}

	// A bare machine keeps its mode; one left empty is a container host;
	// any other mode is refused.
	bare := store.Host{ID: uuid.NewString(), OrgID: other.ID, Name: "bare", Address: "10.0.0.2:22", User: "root",
		HostKey: a.HostKey, KeyID: "k1", SealedKey: []byte{1}, Mode: store.HostBare, CreatedBy: "key:x", CreatedAt: f.next()}
	must(t, s.CreateHost(ctx, bare))
	if got, err := s.GetHost(ctx, bare.ID); err != nil || got.Mode != store.HostBare {
		t.Fatalf("a bare host: %+v, %v", got, err)
	}
	unset := bare
	unset.ID, unset.Name, unset.Mode = uuid.NewString(), "unset", ""
	must(t, s.CreateHost(ctx, unset))
	if got, err := s.GetHost(ctx, unset.ID); err != nil || got.Mode != store.HostContainer {
		t.Fatalf("a host with no mode: %+v, %v", got, err)
	}
	odd := bare
	odd.ID, odd.Name, odd.Mode = uuid.NewString(), "odd", "vm"
	if err := s.CreateHost(ctx, odd); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("mode vm: err = %v, want invalid argument", err)
	}
	must(t, s.DeleteHost(ctx, bare.ID))
	must(t, s.DeleteHost(ctx, unset.ID))

	page1, next, err := s.ListHosts(ctx, o.ID, store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.Host{a, b})
	page2, _, err := s.ListHosts(ctx, o.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.Host{c})
	all, err := s.ListHostsAfter(ctx, "", 100)
	must(t, err)
	if len(all) != 4 {
		t.Fatalf("every org's hosts: %d, want 4", len(all))
	}

	if ok, err := s.ClaimHostTeardown(ctx, c.ID, c.LastUsedAt.Add(time.Second)); err != nil || ok {
		t.Fatalf("a claim at another last use: %v, %v", ok, err)
	}
	ok, err := s.ClaimHostTeardown(ctx, c.ID, c.LastUsedAt)
	must(t, err)
	if again, err := s.ClaimHostTeardown(ctx, c.ID, c.LastUsedAt); !ok || again || err != nil {
		t.Fatalf("claims: first %v, second %v (%v), want one", ok, again, err)
	}
	must(t, s.SetHostSeal(ctx, c.ID, "k2", []byte{9}))
	if got, err := s.GetHost(ctx, c.ID); err != nil || got.KeyID != "k2" || string(got.SealedKey) != "\x09" {
		t.Fatalf("sealed anew: %+v %v", got, err)
	}
	used := ts(f.next())
	must(t, s.SetHostState(ctx, a.ID, store.HostTornDown, used))
	got, err = s.GetHost(ctx, a.ID)
	must(t, err)
	a.State, a.LastUsedAt = store.HostTornDown, used
	equal(t, "torn down", got, a)
	got, err = s.GetHost(ctx, c.ID)
	must(t, err)
	if got.State != store.HostTornDown {
		t.Fatalf("claimed: state %s", got.State)
	}

	must(t, s.DeleteHost(ctx, b.ID))
	if _, err := s.GetHost(ctx, b.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted: err = %v, want not found", err)
	}
	if err := s.SetHostState(ctx, b.ID, store.HostReady, used); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("state of a deleted host: err = %v, want not found", err)
	}
	if err := s.DeleteHost(ctx, b.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted twice: err = %v, want not found", err)
	}
}
