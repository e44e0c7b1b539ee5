package dialect

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// wantCode checks that err is a public error of kind with code.
func wantCode(t *testing.T, what string, err, kind error, code string) {
	t.Helper()
	pub, ok := errdefs.Public(err)
	if !errors.Is(err, kind) || !ok || pub.Code != code {
		t.Fatalf("%s: error %v, want kind %v and code %q", what, err, kind, code)
	}
}

func TestCheckRuntimeIDPrefix(t *testing.T) {
	for _, p := range []string{"", "0123abc", "0123ABCD", "0123abc%", "0123abcd_"} {
		wantCode(t, p, CheckRuntimeIDPrefix(p), errdefs.ErrInvalidArgument, "invalid_runtime_id")
	}
	for _, p := range []string{"0123abcd", "0123abcd-ef01-"} {
		if err := CheckRuntimeIDPrefix(p); err != nil {
			t.Fatalf("CheckRuntimeIDPrefix(%q) = %v", p, err)
		}
	}
}

func TestMissOrConflict(t *testing.T) {
	wantCode(t, "gone", MissOrConflict(Runtime, "r1", 3, false), errdefs.ErrNotFound, "runtime_not_found")
	err := MissOrConflict(Sandbox, "s1", 3, true)
	wantCode(t, "moved on", err, errdefs.ErrConflict, "sandbox_version_conflict")
	if !errors.Is(err, store.ErrStale) {
		t.Fatalf("a version conflict is not store.ErrStale: %v", err)
	}
}

func TestCheckSandboxFilter(t *testing.T) {
	_, err := CheckSandboxFilter(store.SandboxFilter{Workspaces: []string{"w"}}, store.Page{})
	wantCode(t, "no org", err, errdefs.ErrInvalidArgument, "invalid_sandbox_filter")

	for _, f := range []store.SandboxFilter{{OrgID: "o"}, {OrgID: "o", Workspaces: []string{"w"}}} {
		if none, err := CheckSandboxFilter(f, store.Page{}); none || err != nil {
			t.Fatalf("CheckSandboxFilter(%+v) = %v, %v; want a listing", f, none, err)
		}
	}
	none, err := CheckSandboxFilter(store.SandboxFilter{OrgID: "o", Workspaces: []string{}}, store.Page{})
	if !none || err != nil {
		t.Fatalf("no workspaces: %v, %v; want no rows", none, err)
	}
	// With no rows to list, the page is still checked.
	_, err = CheckSandboxFilter(store.SandboxFilter{OrgID: "o", Workspaces: []string{}}, store.Page{Cursor: "not a cursor"})
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a bad cursor with no workspaces: %v", err)
	}
}

// providerIDs is a provider-id index the way a dialect's two statements
// read it: exact looks one id up, prefixed lists up to two longer ids
// starting with a prefix.
type providerIDs struct {
	rows    map[string]store.Sandbox
	lookups []string
}

func (p *providerIDs) exact(id string) (store.Sandbox, error) {
	p.lookups = append(p.lookups, id)
	if s, ok := p.rows[id]; ok {
		return s, nil
	}
	return store.Sandbox{}, NotFound(Sandbox, nil)
}

func (p *providerIDs) prefixed(prefix string) ([]string, error) {
	p.lookups = append(p.lookups, "prefix:"+prefix)
	var ids []string
	for id := range p.rows {
		if len(id) > len(prefix) && id[:len(prefix)] == prefix && len(ids) < 2 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func TestSandboxByProviderID(t *testing.T) {
	const one, twinA, twinB = "aaaaaaaaaaaa-one", "bbbbbbbbbbbb-1", "bbbbbbbbbbbb-2"
	p := &providerIDs{rows: map[string]store.Sandbox{one: {ID: "s1"}, twinA: {ID: "s2"}, twinB: {ID: "s3"}}}
	find := func(id string) (store.Sandbox, error) {
		p.lookups = nil
		return SandboxByProviderID(id, p.exact, p.prefixed)
	}

	if s, err := find(one); err != nil || s.ID != "s1" || len(p.lookups) != 1 {
		t.Fatalf("exact id: %+v, %v after %v", s, err, p.lookups)
	}
	if s, err := find("aaaaaaaaaaaa"); err != nil || s.ID != "s1" {
		t.Fatalf("unique prefix: %+v, %v after %v", s, err, p.lookups)
	}
	_, err := find("bbbbbbbbbbbb")
	wantCode(t, "ambiguous prefix", err, errdefs.ErrConflict, "provider_id_ambiguous")
	_, err = find("cccccccccccc")
	wantCode(t, "unknown prefix", err, errdefs.ErrNotFound, "sandbox_not_found")
	// Too short to be a prefix: only the exact lookup runs.
	_, err = find("aaaaaaaaaaa")
	wantCode(t, "short", err, errdefs.ErrNotFound, "sandbox_not_found")
	if len(p.lookups) != 1 {
		t.Fatalf("a short id was resolved as a prefix: %v", p.lookups)
	}
	_, err = find("")
	wantCode(t, "empty", err, errdefs.ErrNotFound, "sandbox_not_found")
	if len(p.lookups) != 0 {
		t.Fatalf("an empty id was looked up: %v", p.lookups)
	}

	// Any error but not found is the answer, not a reason to try a prefix.
	busy := errdefs.Unavailable("store_busy", "busy")
	_, err = SandboxByProviderID("dddddddddddd-x", func(string) (store.Sandbox, error) { return store.Sandbox{}, busy },
		func(string) ([]string, error) { t.Fatal("prefix looked up after a failed lookup"); return nil, nil })
	if !errors.Is(err, busy) {
		t.Fatalf("failed lookup: %v", err)
	}
}

func TestCheckCapabilityVersion(t *testing.T) {
	v := store.CapabilityVersion{ID: "c1", OrgID: "o", Name: "tools", Version: "1.0.0", Digest: "sha256:x", Bundle: []byte("b")}
	if c, err := CheckCapabilityVersion(v); err != nil || c != "{}" {
		t.Fatalf("empty contents: %q, %v; want {}", c, err)
	}
	v.Contents = []byte(`{"a":1}`)
	if c, err := CheckCapabilityVersion(v); err != nil || c != `{"a":1}` {
		t.Fatalf("contents: %q, %v", c, err)
	}
	noBundle := v
	noBundle.Bundle = nil
	noDigest := v
	noDigest.Digest = ""
	for what, bad := range map[string]store.CapabilityVersion{"no bundle": noBundle, "no digest": noDigest} {
		if _, err := CheckCapabilityVersion(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Fatalf("%s: %v", what, err)
		}
	}
}
