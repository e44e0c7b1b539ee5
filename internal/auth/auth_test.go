package auth_test

import (
	"context"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/auth/paseto"
	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestKeyShape: a new key is well formed and hashes the same each time;
// anything else of the shape is refused before a lookup.
func TestKeyShape(t *testing.T) {
	k := auth.NewKey()
	if !auth.WellFormed(k) || auth.Hash(k) != auth.Hash(k) || auth.NewKey() == k {
		t.Fatalf("key %q", k)
	}
	for _, bad := range []string{"", k[:len(k)-1], k + "0", "pdx_" + k[4:], k[:10] + "zz" + k[12:], auth.SessionPrefix + k} {
		if auth.WellFormed(bad) {
			t.Errorf("%q is well formed", bad)
		}
	}
}

// TestRoles: each role includes the ones below it.
func TestRoles(t *testing.T) {
	for i, r := range auth.Roles {
		for j, s := range auth.Roles {
			if r.AtLeast(s) != (i >= j) {
				t.Errorf("%s at least %s: %v", r, s, r.AtLeast(s))
			}
			if want := auth.Roles[min(i, j)]; auth.MinRole(r, s) != want {
				t.Errorf("min(%s, %s) = %s", r, s, auth.MinRole(r, s))
			}
		}
	}
	if _, err := auth.ParseRole("boss"); !errorsIs(err, errdefs.ErrInvalidArgument) {
		t.Errorf("boss: %v", err)
	}
	if auth.Role("").AtLeast(auth.RoleViewer) || auth.Role("boss").Valid() {
		t.Error("no role is a role")
	}
}

func errorsIs(err, kind error) bool { return err != nil && errdefs.KindOf(err) == kind }

func testKey(b byte) paseto.Key {
	var k paseto.Key
	for i := range k {
		k[i] = b
	}
	return k
}

// TestPreviewToken: a preview token opens for its runtime and port until
// it expires, under its key only, and a session token never opens as
// one.
func TestPreviewToken(t *testing.T) {
	key := testKey(1)
	now := time.Now()
	c := auth.PreviewClaims{RuntimeID: "rt", Port: 3000, Expires: now.Add(time.Minute), Credential: "key:k"}
	tok := auth.SealPreview(key, c)
	got, err := auth.OpenPreview(key, tok, "rt", 3000, now)
	if err != nil || got.Credential != "key:k" {
		t.Fatalf("open: %+v %v", got, err)
	}
	for _, tc := range []struct {
		name string
		key  paseto.Key
		tok  string
		rt   string
		port int
		at   time.Time
	}{
		{"another runtime", key, tok, "rt2", 3000, now},
		{"another port", key, tok, "rt", 3001, now},
		{"expired", key, tok, "rt", 3000, now.Add(time.Minute)},
		{"another key", testKey(2), tok, "rt", 3000, now},
		{"a session token", key, paseto.Encrypt(key, []byte(`{"rt":"rt","port":3000}`), nil, []byte("paddock session v1")), "rt", 3000, now},
	} {
		if _, err := auth.OpenPreview(tc.key, tc.tok, tc.rt, tc.port, tc.at); err != auth.ErrBadPreviewToken {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestSignIn: a challenge answered by its address opens a session whose
// token verifies; a nonce works once, not after it expires, and only for
// the address it names; the session ends when revoked or expired.
func TestSignIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		addr, sign := testWallet(t, 1)
		_, other := testWallet(t, 2)
		u := store.User{ID: uuid.NewString(), Wallet: strings.ToLower(addr), CreatedAt: time.Now()}
		if err := st.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		s := auth.SignIn{Store: st, Key: testKey(3), Now: time.Now, Domain: "paddock.test", SessionTTL: time.Hour}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		code := func(err error) string {
			pe, _ := errdefs.Public(err)
			if pe == nil {
				return ""
			}
			return pe.Code
		}
		c, err := s.Challenge(ctx, addr)
		if err != nil || !strings.Contains(c.Message, "paddock.test wants you to sign in") {
			t.Fatalf("challenge %+v %v", c, err)
		}
		if _, _, _, err := s.Session(ctx, c.Nonce, other(c.Message)); code(err) != "wrong_signer" {
			t.Fatalf("another signer: %v", err)
		}
		tok, sess, got, err := s.Session(ctx, c.Nonce, sign(c.Message))
		if err != nil || got.ID != u.ID || !strings.HasPrefix(tok, auth.SessionPrefix) {
			t.Fatalf("session: %v", err)
		}
		if _, _, _, err := s.Session(ctx, c.Nonce, sign(c.Message)); code(err) != "invalid_challenge" {
			t.Fatalf("the nonce again: %v", err)
		}
		if id, err := s.Verify(ctx, tok); err != nil || id.UserID != u.ID || id.SessionID != sess.ID {
			t.Fatalf("verify: %+v %v", id, err)
		}
		late, err := s.Challenge(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(auth.DefaultChallengeTTL)
		if _, _, _, err := s.Session(ctx, late.Nonce, sign(late.Message)); code(err) != "challenge_expired" {
			t.Fatalf("an expired challenge: %v", err)
		}
		time.Sleep(time.Hour - auth.DefaultChallengeTTL)
		if _, err := s.Verify(ctx, tok); code(err) != "invalid_session" {
			t.Fatalf("an expired session: %v", err)
		}
		c, _ = s.Challenge(ctx, addr)
		tok, sess, _, err = s.Session(ctx, c.Nonce, sign(c.Message))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Revoke(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Verify(ctx, tok); code(err) != "invalid_session" {
			t.Fatalf("a revoked session: %v", err)
		}
	})
}

func testWallet(t *testing.T, n byte) (string, func(msg string) string) {
	t.Helper()
	k, err := wallet.ParsePrivateKey(hex.EncodeToString(append(make([]byte, 31), n)))
	if err != nil {
		t.Fatal(err)
	}
	return wallet.AddressOf(k.PubKey()).String(), func(msg string) string {
		sig := wallet.Sign(k, []byte(msg))
		return "0x" + hex.EncodeToString(sig[:])
	}
}

// TestSignInValidate: a sign-in without its store, clock or domain is
// its maker's mistake, found when it is made, never a 501 at run time.
func TestSignInValidate(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		name string
		edit func(*auth.SignIn)
	}{
		{"whole", func(*auth.SignIn) {}},
		{"no domain", func(s *auth.SignIn) { s.Domain = "" }},
		{"no store", func(s *auth.SignIn) { s.Store = nil }},
		{"no clock", func(s *auth.SignIn) { s.Now = nil }},
	} {
		s := auth.SignIn{Store: st, Key: testKey(3), Now: time.Now, Domain: "paddock.test"}
		tc.edit(&s)
		if err := s.Validate(); (err == nil) != (tc.name == "whole") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
