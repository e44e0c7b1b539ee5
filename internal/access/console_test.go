package access_test

import (
	"context"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
)

// openKeySession opens a console session with raw and checks what it
// names: the key, its holder, the session.
func openKeySession(t *testing.T, w *world, raw string) (string, iam.Principal) {
	t.Helper()
	tok, sess, p, err := w.sessions.KeySession(context.Background(), raw)
	must(t, err)
	if !auth.IsSessionToken(tok) || sess.KeyID != p.KeyID || p.Console != sess.ID || sess.UserID != p.UserID {
		t.Fatalf("key session %+v, principal %+v", sess, p)
	}
	return tok, p
}

// TestConsoleKeySession: a console session opened with an API key is that
// key, checked again on every use: the same principal (with the session),
// its role lowered with its holder's; an installation key's has no user;
// a malformed or unknown key opens nothing.
func TestConsoleKeySession(t *testing.T) {
	ctx := context.Background()
	t.Run("the key's principal", func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		raw := w.key("member", iam.KeySpec{Workspace: "dev"})
		tok, opened := openKeySession(t, w, raw)
		want := w.principal(raw)
		got := w.principal(tok)
		if got.Console == "" || got.Console != opened.Console {
			t.Fatalf("console session %q, opened %q", got.Console, opened.Console)
		}
		got.Console = ""
		if got != want {
			t.Fatalf("cookie principal %+v, want the key's %+v", got, want)
		}
		if got.SessionID != "" {
			t.Fatal("a key's console session acts as a wallet session")
		}
		again, err := w.svc.Reverify(ctx, opened.Presented())
		must(t, err)
		if again.KeyID != want.KeyID || again.Console != opened.Console {
			t.Fatalf("reverified %+v", again)
		}
		must(t, w.st.SetOrgMemberRole(ctx, w.acme.ID, w.users["member"].ID, "viewer"))
		if p := w.principal(tok); p.Role != auth.RoleViewer {
			t.Fatalf("after the holder became a viewer: %s", p.Role)
		}
	})
	t.Run("installation key", func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		tok, p := openKeySession(t, w, w.installationKeyRaw)
		if !p.Installation || p.UserID != "" || !w.principal(tok).Installation {
			t.Fatalf("installation key session %+v", p)
		}
	})
	t.Run("refused keys", func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		for _, raw := range []string{"", "pdk_nothex", auth.NewKey()} {
			if _, _, _, err := w.sessions.KeySession(ctx, raw); code(err) != "invalid_api_key" {
				t.Errorf("key %q: %v", raw, err)
			}
		}
	})
}

// TestConsoleKeySessionEnds: a key's console session is refused once the
// key is revoked or the session signed out, and what it made (a preview
// token) goes with either; the key outlives its sessions.
func TestConsoleKeySessionEnds(t *testing.T) {
	ctx := context.Background()
	t.Run("revoked key", func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		raw := w.key("member", iam.KeySpec{})
		tok, p := openKeySession(t, w, raw)
		preview, _ := w.sessions.IssuePreviewToken(p, w.rtDev, port, time.Hour)
		if _, _, err := w.svc.PreviewToken(ctx, preview, w.rtDev, port); err != nil {
			t.Fatalf("preview token before: %v", err)
		}
		sc, err := w.svc.Authorize(ctx, p, iam.Member, iam.Target{Org: "acme"})
		must(t, err)
		must(t, w.svc.RevokeKey(ctx, p, sc.Access, p.KeyID))
		if _, err := w.svc.Authenticate(ctx, tok); reason(err) != "revoked" {
			t.Fatalf("after the key was revoked: %v", err)
		}
		if _, _, err := w.svc.PreviewToken(ctx, preview, w.rtDev, port); err == nil {
			t.Fatal("a preview token made through the session outlived its key")
		}
	})
	t.Run("signed out", func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		raw := w.key("member", iam.KeySpec{})
		tok, p := openKeySession(t, w, raw)
		preview, _ := w.sessions.IssuePreviewToken(p, w.rtDev, port, time.Hour)
		must(t, w.sessions.SignOut(ctx, p))
		if _, err := w.svc.Authenticate(ctx, tok); reason(err) != "revoked" {
			t.Fatalf("after sign-out: %v", err)
		}
		if _, _, err := w.svc.PreviewToken(ctx, preview, w.rtDev, port); err == nil {
			t.Fatal("a preview token made through the session outlived it")
		}
		w.principal(raw) // the key itself lives on
	})
}

// TestConsoleCSRF: a session's CSRF token is its own: another session's,
// an empty one, or one under another key does not pass.
func TestConsoleCSRF(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	a, b := w.sessions.CSRFToken("a"), w.sessions.CSRFToken("b")
	switch {
	case a == "" || a == b:
		t.Fatalf("tokens %q %q", a, b)
	case !w.sessions.ValidCSRF("a", a):
		t.Fatal("a session's own token refused")
	case w.sessions.ValidCSRF("a", b), w.sessions.ValidCSRF("a", ""), w.sessions.ValidCSRF("a", a[:len(a)-1]):
		t.Fatal("another token passed")
	}
	other := *w.signin
	other.Key[0] ^= 1
	if other.ValidCSRF("a", a) {
		t.Fatal("a token passed under another session key")
	}
}
