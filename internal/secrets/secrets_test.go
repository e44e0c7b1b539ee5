package secrets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

type fixture struct {
	st          store.Store
	dir         string
	org, ws     string
	keys        *Keyring
	svc         *Service
	dbPath      string
	otherOrg    string
	otherWSOrg1 string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, dbPath: filepath.Join(dir, "paddock.db")}
	st, err := sqlite.Open(t.Context(), f.dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	for _, o := range []*string{&f.org, &f.otherOrg} {
		*o = uuid.NewString()
		if err := st.CreateOrg(t.Context(), store.Org{ID: *o, Name: *o}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []*string{&f.ws, &f.otherWSOrg1} {
		*w = uuid.NewString()
		if err := st.CreateWorkspace(t.Context(), store.Workspace{ID: *w, OrgID: f.org, Name: *w}); err != nil {
			t.Fatal(err)
		}
	}
	if f.keys, err = LoadKeyring(dir, ""); err != nil {
		t.Fatal(err)
	}
	f.svc = New(st, f.keys, nil)
	return f
}

func ptr[T any](v T) *T { return &v }

func TestKeyFileIsPrivate(t *testing.T) {
	f := newFixture(t)
	fi, err := os.Stat(filepath.Join(f.dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := LoadKeyring(f.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if again.CurrentKeyID() != f.keys.CurrentKeyID() {
		t.Fatal("a second load made another key")
	}
}

func TestSealedAtRest(t *testing.T) {
	f := newFixture(t)
	const value = "sk-live-0123456789abcdef-at-rest"
	sec, err := f.svc.Create(t.Context(), f.org, f.ws, Spec{Name: "openai", Value: ptr(value)})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Env != "OPENAI" || sec.KeyID != f.keys.CurrentKeyID() {
		t.Fatalf("created: %+v", sec)
	}
	if bytes.Contains(sec.Sealed, []byte(value)) {
		t.Fatal("the sealed value holds the value")
	}
	f.st.Close()
	for _, name := range []string{"paddock.db", "paddock.db-wal"} {
		b, err := os.ReadFile(filepath.Join(f.dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(value)) {
			t.Fatalf("%s holds the value in the clear", name)
		}
	}
}

func TestSealIsBoundToItsRow(t *testing.T) {
	f := newFixture(t)
	a, err := f.svc.Create(t.Context(), f.org, "", Spec{Name: "a", Value: ptr("value-a")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.svc.Create(t.Context(), f.org, "", Spec{Name: "b", Value: ptr("value-b")})
	if err != nil {
		t.Fatal(err)
	}
	b.Sealed = a.Sealed // moved from another secret
	if _, err := f.keys.Open(b); err == nil {
		t.Fatal("a sealed value opened for another secret")
	} else if strings.Contains(err.Error(), "value-a") {
		t.Fatalf("the error quotes the value: %v", err)
	}
	wrong, err := LoadKeyring("", NewKey())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Open(a); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("another key: %v, want %s", err, CodeKeyMissing)
	}
}

func TestSpecChecks(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("x", MaxValueBytes+1)
	for _, tc := range []struct {
		name string
		spec Spec
		code string
	}{
		{"no value", Spec{Name: "a"}, CodeInvalidValue},
		{"empty value", Spec{Name: "a", Value: ptr("")}, CodeInvalidValue},
		{"huge value", Spec{Name: "a", Value: &big}, CodeInvalidValue},
		{"NUL", Spec{Name: "a", Value: ptr("a\x00b")}, CodeInvalidValue},
		{"bad name", Spec{Name: "has space", Value: ptr("v")}, CodeInvalidName},
		{"uuid name", Spec{Name: uuid.NewString(), Value: ptr("v")}, CodeInvalidName},
		{"bad env", Spec{Name: "a", Env: "1X", Value: ptr("v")}, CodeInvalidEnv},
		{"reserved env", Spec{Name: "a", Env: "https_proxy", Value: ptr("v")}, CodeInvalidEnv},
		{"paddock env", Spec{Name: "a", Env: "PADDOCK_PROCESS", Value: ptr("v")}, CodeInvalidEnv},
		{"hosts unbrokered", Spec{Name: "a", Value: ptr("v"), Hosts: &[]string{"x.com"}}, CodeInvalidHosts},
		{"brokered no hosts", Spec{Name: "a", Value: ptr("v"), Brokered: ptr(true)}, CodeInvalidHosts},
		{"brokered bad host", Spec{Name: "a", Value: ptr("v"), Brokered: ptr(true), Hosts: &[]string{"10.0.0.1"}}, CodeInvalidHosts},
		{"brokered any host", Spec{Name: "a", Value: ptr("v"), Brokered: ptr(true), Hosts: &[]string{"*"}}, CodeInvalidHosts},
		{"brokered line break", Spec{Name: "a", Value: ptr("v\r\nX-Evil: 1"), Brokered: ptr(true), Hosts: &[]string{"x.com"}}, CodeInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Create(t.Context(), f.org, "", tc.spec)
			e, ok := errdefs.Public(err)
			if !ok || e.Code != tc.code || !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if tc.spec.Value != nil && len(*tc.spec.Value) > 1 && strings.Contains(err.Error(), *tc.spec.Value) {
				t.Fatalf("the error quotes the value: %v", err)
			}
		})
	}
	if _, err := f.svc.Create(t.Context(), f.org, "", Spec{Name: "dup", Value: ptr("v")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Create(t.Context(), f.org, "", Spec{Name: "dup", Value: ptr("v")}); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("a duplicate: %v", err)
	}
}

func TestResolveAndInject(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	orgWide, err := f.svc.Create(ctx, f.org, "", Spec{Name: "github", Value: ptr("org-token"), Env: "GH_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	// The workspace's own secret shadows the org's of the same name.
	shadow, err := f.svc.Create(ctx, f.org, f.ws, Spec{Name: "github", Value: ptr("ws-token"), Env: "GH_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	brokered, err := f.svc.Create(ctx, f.org, f.ws, Spec{Name: "openai", Value: ptr("sk-real"), Brokered: ptr(true), Hosts: &[]string{"API.openai.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if brokered.Hosts[0] != "api.openai.com" {
		t.Fatalf("hosts: %v", brokered.Hosts)
	}
	other, err := f.svc.Create(ctx, f.otherOrg, "", Spec{Name: "theirs", Value: ptr("x")})
	if err != nil {
		t.Fatal(err)
	}
	inOtherWS, err := f.svc.Create(ctx, f.org, f.otherWSOrg1, Spec{Name: "sibling", Value: ptr("x")})
	if err != nil {
		t.Fatal(err)
	}

	got, err := f.svc.Resolve(ctx, f.org, f.ws, []string{"github", "openai", orgWide.ID, "openai"})
	if err == nil || !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("two GH_TOKENs: %v, %v", got, err)
	}
	got, err = f.svc.Resolve(ctx, f.org, f.ws, []string{"github", "openai", "openai"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != shadow.ID || got[1].ID != brokered.ID {
		t.Fatalf("resolved %+v", got)
	}
	for _, ref := range []string{"nope", other.ID, inOtherWS.ID, "sibling", "theirs"} {
		if _, err := f.svc.Resolve(ctx, f.org, f.ws, []string{ref}); !errdefs.IsNotFound(err) {
			t.Errorf("%s: %v, want secret_not_found", ref, err)
		}
	}

	sb := store.Sandbox{ID: uuid.NewString(), OrgID: f.org, SecretIDs: []string{shadow.ID, brokered.ID}}
	env, err := f.svc.Env(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	if env["GH_TOKEN"] != "ws-token" || env["OPENAI"] != egress.Placeholder(brokered.ID) || len(env) != 2 {
		t.Fatalf("env %v", env)
	}
	// Deleted since: left out.
	if err := f.svc.Delete(ctx, shadow); err != nil {
		t.Fatal(err)
	}
	if env, err = f.svc.Env(ctx, sb); err != nil || len(env) != 1 {
		t.Fatalf("after a delete: %v %v", env, err)
	}
	// Another org's id in a sandbox row is refused, not opened.
	if _, err := f.svc.Env(ctx, store.Sandbox{ID: "x", OrgID: f.org, SecretIDs: []string{other.ID}}); err == nil {
		t.Fatal("opened another org's secret")
	}
}

func TestReplaceKeepsOrChangesTheValue(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	sec, err := f.svc.Create(ctx, f.org, "", Spec{Name: "tok", Value: ptr("one")})
	if err != nil {
		t.Fatal(err)
	}
	sec, err = f.svc.Replace(ctx, sec, Spec{Env: "TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.keys.Open(sec); string(v) != "one" || sec.Env != "TOKEN" || sec.Version != 2 {
		t.Fatalf("env changed: %+v %q", sec, v)
	}
	sec, err = f.svc.Replace(ctx, sec, Spec{Value: ptr("two")})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.keys.Open(sec); string(v) != "two" {
		t.Fatalf("value replaced: %q", v)
	}
	if _, err := f.svc.Replace(ctx, sec, Spec{Brokered: ptr(true)}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("brokered without hosts: %v", err)
	}
}

func TestRotateWithKeyFile(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	values := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		sec, err := f.svc.Create(ctx, f.org, "", Spec{Name: name, Value: ptr("value-" + name)})
		if err != nil {
			t.Fatal(err)
		}
		values[sec.ID] = "value-" + name
	}
	old := f.keys.CurrentKeyID()
	oldFile, _ := os.ReadFile(filepath.Join(f.dir, KeyFile))
	r, err := Rotate(ctx, f.st, f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Secrets != 3 || r.KeyID == old {
		t.Fatalf("rotation: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(f.dir, NextKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("secrets.key.next is left")
	}
	fi, _ := os.Stat(filepath.Join(f.dir, KeyFile))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("new key file mode %v", fi.Mode().Perm())
	}
	fresh, err := LoadKeyring(f.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	all, err := f.st.AllSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range all {
		if sec.KeyID != r.KeyID {
			t.Fatalf("%s is still under key %s", sec.Name, sec.KeyID)
		}
		// A server that loaded the old key picks up the new one.
		for _, k := range []*Keyring{fresh, f.keys} {
			if v, err := k.Open(sec); err != nil || string(v) != values[sec.ID] {
				t.Fatalf("%s after rotation: %q %v", sec.Name, v, err)
			}
		}
	}
	// The old key opens nothing any more.
	oldKeys, err := LoadKeyring("", string(oldFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oldKeys.Open(all[0]); err == nil {
		t.Fatal("the old key still opens a secret")
	}
	// A new secret made by the running server uses the new key.
	sec, err := f.svc.Create(ctx, f.org, "", Spec{Name: "d", Value: ptr("value-d")})
	if err != nil {
		t.Fatal(err)
	}
	if sec.KeyID != r.KeyID {
		t.Fatalf("made after the rotation under key %s", sec.KeyID)
	}
}

func TestRotateCutShortIsFinishedByAnotherRun(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	sec, err := f.svc.Create(ctx, f.org, "", Spec{Name: "a", Value: ptr("value-a")})
	if err != nil {
		t.Fatal(err)
	}
	// Cut short after the next key was written: a secret made meanwhile
	// is sealed under the next key, and both still open.
	if err := writeKeyFile(filepath.Join(f.dir, NextKeyFile), NewKey()); err != nil {
		t.Fatal(err)
	}
	mid, err := f.svc.Create(ctx, f.org, "", Spec{Name: "b", Value: ptr("value-b")})
	if err != nil {
		t.Fatal(err)
	}
	if mid.KeyID == sec.KeyID {
		t.Fatal("a secret made mid-rotation used the old key")
	}
	r, err := Rotate(ctx, f.st, f.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.KeyID != mid.KeyID || r.Secrets != 1 {
		t.Fatalf("finished rotation: %+v", r)
	}
}

func TestRotateWithEnvironmentKey(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	envKey := NewKey()
	keys, err := LoadKeyring("", envKey)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(f.st, keys, nil)
	if _, err := svc.Create(ctx, f.org, "", Spec{Name: "a", Value: ptr("value-a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(ctx, f.st, f.dir, envKey, ""); err == nil || !strings.Contains(err.Error(), "PADDOCK_SECRETS_NEW_KEY") {
		t.Fatalf("without a new key: %v", err)
	}
	newKey := NewKey()
	r, err := Rotate(ctx, f.st, f.dir, envKey, newKey)
	if err != nil || r.Secrets != 1 || r.KeyFile != "" {
		t.Fatalf("rotation: %+v %v", r, err)
	}
	after, err := LoadKeyring("", newKey)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := f.st.AllSecrets(ctx)
	if v, err := after.Open(all[0]); err != nil || string(v) != "value-a" {
		t.Fatalf("under the new key: %q %v", v, err)
	}
	if _, err := keys.Open(all[0]); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("a server still on the old environment key: %v", err)
	}
}

// TestBrokersOpenOnlyWhatTheHostMayGet: the proxy asks for one host's
// brokered secrets; only those are opened (a non-matching one whose seal
// is broken does not fail the lookup), and injected ones never come back.
func TestBrokersOpenOnlyWhatTheHostMayGet(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	model, err := f.svc.Create(ctx, f.org, "", Spec{Name: "model", Value: ptr("sk-model"), Brokered: ptr(true), Hosts: &[]string{"*.model.test"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.svc.Create(ctx, f.org, "", Spec{Name: "other", Value: ptr("sk-other"), Brokered: ptr(true), Hosts: &[]string{"api.other.test"}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.svc.Create(ctx, f.org, "", Spec{Name: "plain", Value: ptr("v")})
	if err != nil {
		t.Fatal(err)
	}
	other.Sealed = append([]byte(nil), model.Sealed...) // does not open as "other"
	if _, err := f.st.UpdateSecret(ctx, other); err != nil {
		t.Fatal(err)
	}
	ids := []string{model.ID, other.ID, plain.ID}
	got, err := f.svc.Brokers(ctx, f.org, ids, "api.model.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].SecretID != model.ID || got[0].Value != "sk-model" || got[0].Placeholder != egress.Placeholder(model.ID) {
		t.Fatalf("brokers for api.model.test: %+v", got)
	}
	if got, err := f.svc.Brokers(ctx, f.org, ids, "model.test"); err != nil || len(got) != 0 {
		t.Fatalf("the wildcard's own domain: %+v %v", got, err)
	}
	if _, err := f.svc.Brokers(ctx, f.org, ids, "api.other.test"); err == nil {
		t.Fatal("a broken seal opened")
	}
	if _, err := f.svc.Brokers(ctx, f.otherOrg, ids, "api.model.test"); err == nil {
		t.Fatal("another org's sandbox got the secrets")
	}
}
