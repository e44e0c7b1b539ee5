package access_test

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/auth/paseto"
	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// world is an access service on a real SQLite store holding org acme
// (workspaces dev and ops, a runtime in each) and org other (workspace w,
// a runtime), and people of every role in acme:
//
//   - owner and admin, in no workspace (they see all of them);
//   - member and viewer, in workspace dev;
//   - loner, a member in no workspace;
//   - outsider, a member of other only.
type world struct {
	t      *testing.T
	st     store.Store
	svc    *iam.Service
	signin *auth.SignIn
	// sessions is what the service offers with signin.
	sessions *iam.SignIn
	path     iam.Path

	acme, other        store.Org
	dev, ops, w        store.Workspace
	rtDev, rtOps, rtW  store.Runtime
	users              map[string]store.User
	wallets            map[string]*walletKey
	installation       iam.Principal
	installationKeyRaw string
}

type walletKey struct {
	addr string
	sign func(msg string) string
}

// newWorld builds a world. Inside a synctest bubble it must be made
// there, so that its store's goroutines are the bubble's; close closes
// the store.
func newWorld(t *testing.T, opts ...func(*iam.Config)) *world {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var key paseto.Key
	copy(key[:], "0123456789abcdef0123456789abcdef")
	w := &world{t: t, st: st, users: map[string]store.User{}, wallets: map[string]*walletKey{}}
	w.signin = &auth.SignIn{Store: st, Key: key, Now: time.Now, Domain: "paddock.test"}
	cfg := iam.Config{Store: st, SignIn: w.signin}
	for _, o := range opts {
		o(&cfg)
	}
	w.svc = iam.New(cfg)
	w.sessions = w.svc.UseSignIn(w.signin)
	w.path = iam.Path{Access: w.svc}
	w.acme, w.dev, w.rtDev = w.org("acme", "dev")
	w.ops, w.rtOps = w.workspace(w.acme, "ops")
	w.other, w.w, w.rtW = w.org("other", "w")
	for i, p := range []struct{ name, role, ws string }{
		{"owner", "owner", ""}, {"admin", "admin", ""}, {"member", "member", "dev"},
		{"viewer", "viewer", "dev"}, {"loner", "member", ""},
	} {
		u := w.user(p.name, i+1)
		w.join(w.acme, u, p.role)
		if p.ws != "" {
			must(t, st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: w.acme.ID, WorkspaceID: w.dev.ID, UserID: u.ID, CreatedAt: time.Now()}))
		}
	}
	w.join(w.other, w.user("outsider", 9), "member")
	w.installationKeyRaw, _, err = auth.Keys{Store: st, Now: time.Now}.CreateInstallation(ctx, "admin", "")
	must(t, err)
	w.installation, err = w.svc.Authenticate(ctx, w.installationKeyRaw)
	must(t, err)
	return w
}

func (w *world) close() { w.st.Close() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// org makes an org with one workspace holding one runtime.
func (w *world) org(name, ws string) (store.Org, store.Workspace, store.Runtime) {
	o := store.Org{ID: uuid.NewString(), Name: name, CreatedAt: time.Now()}
	must(w.t, w.st.CreateOrg(context.Background(), o))
	wsp, rt := w.workspace(o, ws)
	return o, wsp, rt
}

// workspace makes a workspace of o holding one runtime.
func (w *world) workspace(o store.Org, name string) (store.Workspace, store.Runtime) {
	ctx := context.Background()
	wsp := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: name, CreatedAt: time.Now()}
	must(w.t, w.st.CreateWorkspace(ctx, wsp))
	return wsp, w.runtime(wsp, uuid.NewString())
}

// runtime makes a runtime with id in wsp.
func (w *world) runtime(wsp store.Workspace, id string) store.Runtime {
	ctx := context.Background()
	p := store.Project{ID: uuid.NewString(), OrgID: wsp.OrgID, WorkspaceID: wsp.ID, Name: "p" + uuid.NewString()[:8], CreatedAt: time.Now()}
	must(w.t, w.st.CreateProject(ctx, p))
	rt := store.Runtime{ID: id, OrgID: wsp.OrgID, WorkspaceID: wsp.ID, ProjectID: p.ID, Status: store.RuntimeRunning, CreatedAt: time.Now()}
	must(w.t, w.st.CreateRuntime(ctx, rt))
	got, err := w.st.GetRuntime(ctx, id)
	must(w.t, err)
	return got
}

// user makes a user with a wallet of private key n.
func (w *world) user(name string, n int) store.User {
	k, err := wallet.ParsePrivateKey(hex.EncodeToString(append(make([]byte, 31), byte(n))))
	must(w.t, err)
	addr := wallet.AddressOf(k.PubKey())
	w.wallets[name] = &walletKey{addr: addr.String(), sign: func(msg string) string {
		sig := wallet.Sign(k, []byte(msg))
		return "0x" + hex.EncodeToString(sig[:])
	}}
	u := store.User{ID: uuid.NewString(), Email: name + "@example.com", Wallet: addr.Lower(), Name: name, CreatedAt: time.Now()}
	must(w.t, w.st.CreateUser(context.Background(), u))
	w.users[name] = u
	return u
}

// join makes u a member of o with role, now.
func (w *world) join(o store.Org, u store.User, role string) {
	w.t.Helper()
	must(w.t, w.st.AddOrgMember(context.Background(), store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: role, CreatedAt: time.Now()}))
}

// leave removes u from o.
func (w *world) leave(o store.Org, u store.User) {
	w.t.Helper()
	must(w.t, w.st.RemoveOrgMember(context.Background(), o.ID, u.ID, time.Now()))
}

// session signs name in with its wallet and returns the session token.
func (w *world) session(name string) string {
	w.t.Helper()
	ctx := context.Background()
	wk := w.wallets[name]
	c, err := w.sessions.Challenge(ctx, wk.addr)
	must(w.t, err)
	tok, _, _, err := w.sessions.OpenSession(ctx, c.Nonce, wk.sign(c.Message))
	must(w.t, err)
	return tok
}

// key makes a key of org acme for name (by name itself, with its own
// session), with spec's role and workspace, and returns its plaintext.
func (w *world) key(name string, spec iam.KeySpec) string {
	w.t.Helper()
	ctx := context.Background()
	p := w.principal(w.session(name))
	sc, err := w.svc.Authorize(ctx, p, iam.Viewer, iam.Target{Org: "acme"})
	must(w.t, err)
	raw, _, err := w.svc.CreateKey(ctx, p, sc.Access, spec)
	must(w.t, err)
	return raw
}

// principal authenticates a bearer credential, which must be good.
func (w *world) principal(cred string) iam.Principal {
	w.t.Helper()
	p, err := w.svc.Authenticate(context.Background(), cred)
	must(w.t, err)
	return p
}

// code is err's public code: "" for nil, "internal" for a private error.
func code(err error) string {
	if err == nil {
		return ""
	}
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code
	}
	return "internal: " + err.Error()
}

// reason is why err refused, as a door logs it.
func reason(err error) string {
	var why *auth.Refusal
	if errors.As(err, &why) {
		return why.Reason
	}
	return ""
}
