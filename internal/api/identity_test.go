package api_test

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// Public test keys (Hardhat's account #0, and private key 2).
const (
	hardhatKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	otherKey   = "0000000000000000000000000000000000000000000000000000000000000002"
)

func mustWallet(t *testing.T, hexKey string) (string, func(msg string) string) {
	t.Helper()
	k, err := wallet.ParsePrivateKey(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(msg string) string {
		sig := wallet.Sign(k, []byte(msg))
		return "0x" + hex.EncodeToString(sig[:])
	}
	return wallet.AddressOf(k.PubKey()).String(), sign
}

// identityEnv is an API on a fake clock with org acme (workspaces dev and
// ops) and org other.
func identityEnv(t *testing.T, limits api.Limits) (*servertest.Env, *testenv.Clock) {
	t.Helper()
	clock := testenv.NewClock(time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC))
	env := servertest.New(t, servertest.Options{Now: clock.Now, Limits: limits})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "ops"})
	return env, clock
}

// keyFor makes a key for member in org acme with the admin key.
func keyFor(t *testing.T, env *servertest.Env, req client.CreateKeyRequest) client.CreatedKey {
	t.Helper()
	return keyFor2(t, env, "acme", req)
}

// keyFor2 makes a key for member in org with the admin key.
func keyFor2(t *testing.T, env *servertest.Env, org string, req client.CreateKeyRequest) client.CreatedKey {
	t.Helper()
	var k client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/"+org+"/keys", req).Decode(t, &k)
	if !auth.WellFormed(k.Key) || !strings.HasPrefix(k.Key, k.Prefix) {
		t.Fatalf("created key %+v", k)
	}
	return k
}

// TestWalletSignIn: a challenge, signed with the wallet (EIP-191), opens
// a session whose PASETO token acts with the user's memberships; replayed,
// expired and foreign-address signatures are refused; signing out ends it.
func TestWalletSignIn(t *testing.T) {
	env, clock := identityEnv(t, api.Limits{})
	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "admin"})

	challenge := func(address string) client.AuthChallenge {
		t.Helper()
		var c client.AuthChallenge
		env.Must(t, 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: address}).Decode(t, &c)
		if !strings.Contains(c.Message, c.Nonce) || !strings.Contains(c.Message, addr) && address == addr {
			t.Fatalf("challenge %+v", c)
		}
		return c
	}
	signIn := func(c client.AuthChallenge, sig string) servertest.Response {
		return env.DoKey(t, "", "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: c.Nonce, Signature: sig})
	}

	c := challenge(addr)
	var sess client.AuthSession
	r := signIn(c, sign(c.Message))
	if r.Status != 201 {
		t.Fatalf("sign in: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &sess)
	if !auth.IsSessionToken(sess.Token) || sess.User.Wallet != strings.ToLower(addr) {
		t.Fatalf("session %+v", sess)
	}
	var me client.Me
	env.MustKey(t, sess.Token, 200, "GET", "/api/v1/me", nil).Decode(t, &me)
	if me.User == nil || me.User.ID != sess.User.ID || len(me.Memberships) != 1 || me.Memberships[0].Org != "acme" || me.Memberships[0].Role != "admin" {
		t.Fatalf("me = %+v", me)
	}
	env.MustKey(t, sess.Token, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"})
	wantError(t, env.DoKey(t, sess.Token, "GET", "/api/v1/org/other", nil), 404, "org_not_found")
	var orgs client.List[client.Org]
	env.MustKey(t, sess.Token, 200, "GET", "/api/v1/orgs", nil).Decode(t, &orgs)
	if len(orgs.Items) != 1 || orgs.Items[0].Name != "acme" {
		t.Fatalf("orgs = %+v", orgs)
	}

	// Replayed: the nonce was used.
	wantError(t, signIn(c, sign(c.Message)), 401, "invalid_challenge")
	// Foreign address: signed by another key than the address named.
	_, signOther := mustWallet(t, otherKey)
	c2 := challenge(addr)
	wantError(t, signIn(c2, signOther(c2.Message)), 401, "wrong_signer")
	// Over another message: recovers someone else.
	wantError(t, signIn(c2, sign(c2.Message+" ")), 401, "wrong_signer")
	// A failed attempt does not use the nonce up.
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: c2.Nonce, Signature: sign(c2.Message)})
	// Expired.
	c3 := challenge(addr)
	clock.Advance(auth.DefaultChallengeTTL)
	wantError(t, signIn(c3, sign(c3.Message)), 401, "challenge_expired")
	// Malformed.
	c4 := challenge(addr)
	wantError(t, signIn(c4, "0x1234"), 400, "invalid_signature")
	wantError(t, env.DoKey(t, "", "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: "0x123"}), 400, "invalid_wallet_address")
	// A wallet no user has: proven, but nobody to sign in as.
	stranger, signStranger := mustWallet(t, otherKey)
	c5 := challenge(stranger)
	wantError(t, signIn(c5, signStranger(c5.Message)), 401, "unknown_wallet")

	// A token that does not open, or was tampered with.
	wantError(t, env.DoKey(t, sess.Token[:len(sess.Token)-2]+"AA", "GET", "/api/v1/me", nil), 401, "invalid_session")

	// Signing out ends the session on its next request.
	env.MustKey(t, sess.Token, 204, "DELETE", "/api/auth/session", nil)
	wantError(t, env.DoKey(t, sess.Token, "GET", "/api/v1/me", nil), 401, "invalid_session")
	// An API key is not a session.
	wantError(t, env.Do(t, "DELETE", "/api/auth/session", nil), 400, "not_a_session")

	// A new wallet ends the sessions the old one opened.
	c7 := challenge(addr)
	var s3 client.AuthSession
	signIn(c7, sign(c7.Message)).Decode(t, &s3)
	env.MustKey(t, s3.Token, 200, "GET", "/api/v1/me", nil)
	newAddr, _ := mustWallet(t, "0000000000000000000000000000000000000000000000000000000000000003")
	env.Must(t, 200, "PATCH", "/api/v1/users/"+addr, client.UpdateUserRequest{Wallet: &newAddr})
	wantError(t, env.DoKey(t, s3.Token, "GET", "/api/v1/me", nil), 401, "invalid_session")
	env.Must(t, 200, "PATCH", "/api/v1/users/"+newAddr, client.UpdateUserRequest{Wallet: &addr})

	// A session expires.
	c6 := challenge(addr)
	var s2 client.AuthSession
	r = signIn(c6, sign(c6.Message))
	r.Decode(t, &s2)
	env.MustKey(t, s2.Token, 200, "GET", "/api/v1/me", nil)
	clock.Advance(auth.DefaultSessionTTL)
	wantError(t, env.DoKey(t, s2.Token, "GET", "/api/v1/me", nil), 401, "invalid_session")
}

// TestKeysScopesAndRoles: keys belong to members, are narrowed and
// capped by role, and expiry, revocation and a lowered role take effect
// on the next request.
func TestKeysScopesAndRoles(t *testing.T) {
	env, clock := identityEnv(t, api.Limits{})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "olga@example.com", Role: "owner"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "bob@example.com"})
	owner := keyFor(t, env, client.CreateKeyRequest{Member: "olga@example.com", Name: "olga"})
	if owner.Role != "owner" {
		t.Fatalf("owner's key role %q", owner.Role)
	}

	// A member's key, narrowed to dev, expiring in an hour.
	bob := keyFor(t, env, client.CreateKeyRequest{Member: "bob@example.com", Workspace: "dev", ExpiresIn: "1h", Name: "ci"})
	if bob.Role != "member" || bob.WorkspaceID == "" || bob.ExpiresAt == nil {
		t.Fatalf("bob's key %+v", bob.APIKey)
	}
	// Above the holder's role: refused.
	wantError(t, env.Do(t, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "bob@example.com", Role: "admin"}), 403, "role_too_high")
	// Narrowed to a workspace the holder is not in: it would see nothing.
	wantError(t, env.Do(t, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "bob@example.com", Workspace: "ops"}), 400, "not_a_workspace_member")

	// What the member's key reaches.
	var p client.Project
	wantError(t, env.DoKey(t, bob.Key, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p"}), 403, "role_too_low")
	env.MustKey(t, owner.Key, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p"}).Decode(t, &p)
	env.MustKey(t, bob.Key, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil)
	wantError(t, env.DoKey(t, bob.Key, "GET", "/api/v1/org/acme/ws/ops", nil), 404, "workspace_not_found")
	wantError(t, env.DoKey(t, bob.Key, "GET", "/api/v1/org/other", nil), 404, "org_not_found")
	wantError(t, env.DoKey(t, bob.Key, "GET", "/api/v1/org/acme/secrets", nil), 403, "key_narrowed_to_workspace")
	var wss client.List[client.Workspace]
	env.MustKey(t, bob.Key, 200, "GET", "/api/v1/org/acme/ws", nil).Decode(t, &wss)
	if len(wss.Items) != 1 || wss.Items[0].Name != "dev" {
		t.Fatalf("bob sees workspaces %+v", wss.Items)
	}
	wantError(t, env.DoKey(t, bob.Key, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "x"}), 403, "installation_admin_only")

	// Roles: only an owner grants owner; an org keeps its last owner.
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "ann@example.com", Role: "admin"})
	ann := keyFor(t, env, client.CreateKeyRequest{Member: "ann@example.com"})
	// A key ann makes for bob lives no longer than ann's membership.
	var annForBob client.CreatedKey
	env.MustKey(t, ann.Key, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "bob@example.com"}).Decode(t, &annForBob)
	env.MustKey(t, annForBob.Key, 200, "GET", "/api/v1/org/acme", nil)
	// A narrowed key makes no keys; below admin, naming anyone else is
	// refused alike, existing or not.
	wantError(t, env.DoKey(t, bob.Key, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{}), 403, "key_narrowed_to_workspace")
	bobOrg := keyFor(t, env, client.CreateKeyRequest{Member: "bob@example.com"})
	for _, who := range []string{"ann@example.com", "nobody@example.com", "0x0000000000000000000000000000000000000001", "olga"} {
		wantError(t, env.DoKey(t, bobOrg.Key, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: who}), 403, "role_too_low")
	}
	env.MustKey(t, bobOrg.Key, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: "bob@example.com", Name: "own"})
	// An org adds people by address, not by another org's user ids.
	var others client.List[client.OrgMember]
	env.Must(t, 200, "GET", "/api/v1/org/acme/members", nil).Decode(t, &others)
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "zed@example.com", Role: "admin"})
	zed := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "zed@example.com"})
	wantError(t, env.DoKey(t, zed.Key, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: others.Items[0].UserID}), 400, "invalid_member")
	wantError(t, env.DoKey(t, zed.Key, "DELETE", "/api/v1/org/other/members/"+others.Items[0].UserID, nil), 404, "member_not_found")
	wantError(t, env.DoKey(t, zed.Key, "DELETE", "/api/v1/org/other/members/nobody@example.com", nil), 404, "member_not_found")
	wantError(t, env.DoKey(t, ann.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "eve@example.com", Role: "owner"}), 403, "owner_only")
	wantError(t, env.DoKey(t, ann.Key, "PUT", "/api/v1/org/acme/ws/dev/member-limit", client.SetMemberLimitRequest{MemberLimit: 5}), 403, "role_too_low")
	env.MustKey(t, owner.Key, 200, "PUT", "/api/v1/org/acme/ws/dev/member-limit", client.SetMemberLimitRequest{MemberLimit: 5})
	wantError(t, env.DoKey(t, owner.Key, "PATCH", "/api/v1/org/acme/members/olga@example.com", client.SetRoleRequest{Role: "admin"}), 409, "last_owner")

	// Keys are listed without their secret; a member sees its own.
	var ks client.List[client.APIKey]
	env.MustKey(t, owner.Key, 200, "GET", "/api/v1/org/acme/keys", nil).Decode(t, &ks)
	if len(ks.Items) != 6 {
		t.Fatalf("the owner lists %d keys, want 6", len(ks.Items))
	}
	env.MustKey(t, ann.Key, 200, "GET", "/api/v1/org/acme/keys", nil) // an admin too
	r := env.MustKey(t, owner.Key, 200, "GET", "/api/v1/org/acme/keys", nil)
	for _, k := range []string{owner.Key, bob.Key, ann.Key, annForBob.Key, bobOrg.Key} {
		if bytes.Contains(r.Body, []byte(k)) {
			t.Fatal("a listing shows a key")
		}
	}

	// A lowered role takes effect on the key's next request.
	env.Must(t, 200, "PATCH", "/api/v1/org/acme/members/ann@example.com", client.SetRoleRequest{Role: "viewer"})
	wantError(t, env.DoKey(t, ann.Key, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "x"}), 403, "role_too_low")

	// Expiry: on the next request past it.
	clock.Advance(time.Hour)
	wantError(t, env.DoKey(t, bob.Key, "GET", "/api/v1/org/acme/ws/dev", nil), 401, "invalid_api_key")

	// Revocation: at once; a member cannot see another's key to revoke it.
	bob2 := keyFor(t, env, client.CreateKeyRequest{Member: "bob@example.com"})
	env.MustKey(t, bob2.Key, 200, "GET", "/api/v1/org/acme", nil)
	wantError(t, env.DoKey(t, bob2.Key, "DELETE", "/api/v1/org/acme/keys/"+owner.ID, nil), 404, "key_not_found")
	env.MustKey(t, owner.Key, 204, "DELETE", "/api/v1/org/acme/keys/"+bob2.ID, nil)
	wantError(t, env.DoKey(t, bob2.Key, "GET", "/api/v1/org/acme", nil), 401, "invalid_api_key")

	// Removing a member ends their keys, and those they made for others.
	env.MustKey(t, owner.Key, 204, "DELETE", "/api/v1/org/acme/members/ann@example.com", nil)
	wantError(t, env.DoKey(t, ann.Key, "GET", "/api/v1/org/acme", nil), 401, "invalid_api_key")
	wantError(t, env.DoKey(t, annForBob.Key, "GET", "/api/v1/org/acme", nil), 401, "invalid_api_key")
	// Back in the org, their old keys stay dead.
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "ann@example.com", Role: "admin"})
	wantError(t, env.DoKey(t, ann.Key, "GET", "/api/v1/org/acme", nil), 401, "invalid_api_key")

	// The installation admin's own keys.
	var ik client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/keys", map[string]string{"name": "ops"}).Decode(t, &ik)
	env.MustKey(t, ik.Key, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "third"})
	env.Must(t, 204, "DELETE", "/api/v1/keys/"+ik.ID, nil)
	wantError(t, env.DoKey(t, ik.Key, "GET", "/api/v1/orgs", nil), 401, "invalid_api_key")
}

// TestRateLimits: per credential and per client address, token buckets
// answer 429 with Retry-After past their burst, and refill with time. An
// authenticated call draws only from its credential's bucket, so one
// key's burst leaves another key from the same address alone (everyone
// behind one reverse proxy); the address's bucket is for calls without a
// credential or with a refused one.
func TestRateLimits(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC))
	env := servertest.New(t, servertest.Options{Now: clock.Now, Limits: api.Limits{PerKey: api.Rate{PerSecond: 1, Burst: 3}, PerClient: api.Rate{PerSecond: 1, Burst: 4}}})
	for i := range 3 {
		if r := env.Do(t, "GET", "/api/v1/orgs", nil); r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	resp := rawResponse(t, env, env.Key, "GET", "/api/v1/orgs")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("over the limit: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for range 5 {
		wantError(t, env.Do(t, "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	}
	// Another credential from the same address has a bucket of its own,
	// all of it: the first key's burst spent none of the address's.
	other, _, err := auth.Keys{Store: env.Store, Now: clock.Now}.CreateInstallation(t.Context(), "other", "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		env.MustKey(t, other, 200, "GET", "/api/v1/orgs", nil)
	}
	wantError(t, env.DoKey(t, other, "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	// Calls without a credential, and with a refused one, draw from the
	// address's bucket, which is still full.
	for range 2 {
		env.MustKey(t, "", 401, "GET", "/api/v1/orgs", nil)
		env.MustKey(t, auth.NewKey(), 401, "GET", "/api/v1/orgs", nil)
	}
	wantError(t, env.DoKey(t, "", "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	wantError(t, env.DoKey(t, auth.NewKey(), "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	wantError(t, env.DoKey(t, "", "POST", "/api/auth/challenge", map[string]string{"address": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"}), 429, "rate_limited")
	// A second later there is a token again in each.
	clock.Advance(time.Second)
	env.Must(t, 200, "GET", "/api/v1/orgs", nil)
	wantError(t, env.Do(t, "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	env.MustKey(t, "", 401, "GET", "/api/v1/orgs", nil)
	wantError(t, env.DoKey(t, "", "GET", "/api/v1/orgs", nil), 429, "rate_limited")

	// An unauthenticated flood is refused by address; a key from that
	// address is still served, and probes are not limited.
	env2 := servertest.New(t, servertest.Options{Now: clock.Now, Limits: api.Limits{PerKey: api.Rate{PerSecond: -1}, PerClient: api.Rate{PerSecond: 1, Burst: 2}}})
	for range 2 {
		env2.MustKey(t, "", 401, "GET", "/api/v1/orgs", nil)
	}
	for range 20 {
		wantError(t, env2.DoKey(t, "", "GET", "/api/v1/orgs", nil), 429, "rate_limited")
	}
	env2.Must(t, 200, "GET", "/api/v1/orgs", nil)
	env2.MustKey(t, "", 200, "GET", "/health", nil)
	clock.Advance(time.Second)
	env2.MustKey(t, "", 401, "GET", "/api/v1/orgs", nil)
}

func rawResponse(t *testing.T, env *servertest.Env, key, method, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestBodyLimits: every route bounds its body, by class; past it is 413.
func TestBodyLimits(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{JSONBodyBytes: 512, BundleBodyBytes: 1024})
	big := `{"name": "` + strings.Repeat("a", 600) + `"}`
	wantError(t, env.Do(t, "POST", "/api/v1/orgs", big), 413, "body_too_large")
	wantError(t, env.Do(t, "POST", "/api/auth/challenge", big), 413, "body_too_large")
	r := env.MustRaw(t, 413, "POST", "/api/v1/org/acme/capabilities", "application/gzip", bytes.Repeat([]byte{1}, 2048))
	if r.Code() != "body_too_large" {
		t.Fatalf("bundle: %s", r.Body)
	}
	// Under the limits, the same routes answer as usual.
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "small"})
}

// TestFailedAuthenticationIsLogged: with the client's address and why,
// never with what was presented.
func TestFailedAuthenticationIsLogged(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs testenv.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := api.New(api.Config{Access: iam.New(iam.Config{Store: st, Logger: logger}), Tenancy: tenancy.New(tenancy.Config{Store: st}), Logger: logger})
	srv := httptest.NewServer(h)
	defer srv.Close()
	keys := auth.Keys{Store: st, Now: time.Now}
	revoked, k, err := keys.CreateInstallation(ctx, "old", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RevokeAPIKey(ctx, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	unknown := auth.NewKey()
	for _, cred := range []string{unknown, revoked, "not-a-key-at-all", ""} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/orgs", nil)
		if cred != "" {
			req.Header.Set("Authorization", "Bearer "+cred)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("%q: %d", cred, resp.StatusCode)
		}
	}
	out := logs.String()
	for _, want := range []string{"reason=unknown", "reason=revoked", "key_id=" + k.ID, "reason=malformed", "reason=no_credentials", "client=127.0.0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{unknown, revoked, unknown[len(auth.KeyPrefix):], "not-a-key-at-all"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows a presented credential %q", secret)
		}
	}
	if n := strings.Count(out, "authentication failed"); n != 4 {
		t.Errorf("%d failures logged, want 4:\n%s", n, out)
	}
}
