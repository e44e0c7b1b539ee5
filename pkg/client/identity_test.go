package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestIdentityRoutes checks what each sign-in, user, member and key
// method sends and how it reads the answer.
func TestIdentityRoutes(t *testing.T) {
	ctx := t.Context()
	const (
		wallet = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"
		keyID  = "6a1f0b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"
	)
	user := `{"id":"u1","email":"ann@example.com","wallet":"` + wallet + `","name":"Ann","created_at":"` + stamp + `"}`
	wantUser := client.User{ID: "u1", Email: "ann@example.com", Wallet: wallet, Name: "Ann", CreatedAt: mustTime(stamp)}
	key := `{"id":"` + keyID + `","name":"ci","prefix":"pdk_0a1b2c","role":"member","org_id":"o1","user_id":"u1","workspace_id":"w1","created_by":"session:s1","created_at":"` + stamp + `","expires_at":"` + stamp + `"}`
	expires := mustTime(stamp)
	wantKey := client.APIKey{
		ID: keyID, Name: "ci", Prefix: "pdk_0a1b2c", Role: client.RoleMember, OrgID: "o1", UserID: "u1", WorkspaceID: "w1",
		CreatedBy: "session:s1", CreatedAt: mustTime(stamp), ExpiresAt: &expires,
	}
	member := `{"id":"m1","org_id":"o1","user_id":"u1","member":"ann@example.com","role":"admin","user":` + user + `,"created_at":"` + stamp + `"}`
	wantMember := client.OrgMember{ID: "m1", OrgID: "o1", UserID: "u1", Member: "ann@example.com", Role: client.RoleAdmin, User: wantUser, CreatedAt: mustTime(stamp)}
	invitation := `{"id":"i1","org_id":"o1","org":"acme","email":"bob@example.com","role":"member","invited_by":"u1","inviter":"ann@example.com","state":"pending","created_at":"` + stamp + `","expires_at":"` + stamp + `"}`
	wantInvitation := client.Invitation{
		ID: "i1", OrgID: "o1", Org: "acme", Email: "bob@example.com", Role: client.RoleMember, InvitedBy: "u1", Inviter: "ann@example.com",
		State: client.InvitationPending, CreatedAt: mustTime(stamp), ExpiresAt: mustTime(stamp),
	}
	empty, name := "", "Ann B"
	tests := []struct {
		name   string
		status int
		answer string
		call   func(c *client.Client) (any, error)
		method string
		uri    string
		body   string // "" means none
		want   any
	}{
		{
			name: "challenge", status: 201, answer: `{"nonce":"n1","address":"` + wallet + `","message":"sign me","expires_at":"` + stamp + `"}`,
			call:   func(c *client.Client) (any, error) { return c.AuthChallenge(ctx, wallet) },
			method: "POST", uri: "/api/auth/challenge", body: `{"address":"` + wallet + `"}`,
			want: client.AuthChallenge{Nonce: "n1", Address: wallet, Message: "sign me", ExpiresAt: mustTime(stamp)},
		},
		{
			name: "session", status: 201, answer: `{"token":"v4.local.abc","session_id":"s1","user":` + user + `,"expires_at":"` + stamp + `"}`,
			call: func(c *client.Client) (any, error) {
				return c.CreateSession(ctx, client.AuthSessionRequest{Nonce: "n1", Signature: "0xsig"})
			},
			method: "POST", uri: "/api/auth/session", body: `{"nonce":"n1","signature":"0xsig"}`,
			want: client.AuthSession{Token: "v4.local.abc", SessionID: "s1", User: wantUser, ExpiresAt: mustTime(stamp)},
		},
		{
			name: "sign out", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.SignOut(ctx) },
			method: "DELETE", uri: "/api/auth/session",
		},
		{
			name: "me", status: 200, answer: `{"credential":"key:` + keyID + `","installation_admin":false,"user":` + user + `,"key":` + key + `,"memberships":[{"org_id":"o1","org":"acme","role":"member"}]}`,
			call:   func(c *client.Client) (any, error) { return c.Me(ctx) },
			method: "GET", uri: "/api/v1/me",
			want: client.Me{
				Credential: "key:" + keyID, User: &wantUser, Key: &wantKey,
				Memberships: []client.Membership{{OrgID: "o1", Org: "acme", Role: client.RoleMember}},
			},
		},
		{
			name: "create user", status: 201, answer: user,
			call: func(c *client.Client) (any, error) {
				return c.CreateUser(ctx, client.CreateUserRequest{Wallet: wallet, Name: "Ann"})
			},
			method: "POST", uri: "/api/v1/users", body: `{"wallet":"` + wallet + `","name":"Ann"}`,
			want: wantUser,
		},
		{
			name: "list users", status: 200, answer: `{"items":[` + user + `],"next_cursor":"c2"}`,
			call: func(c *client.Client) (any, error) {
				return c.ListUsers(ctx, client.ListOptions{Cursor: "c1", Limit: 2})
			},
			method: "GET", uri: "/api/v1/users?cursor=c1&limit=2",
			want: client.List[client.User]{Items: []client.User{wantUser}, NextCursor: "c2"},
		},
		{
			name: "get user by email", status: 200, answer: user,
			call:   func(c *client.Client) (any, error) { return c.GetUser(ctx, "ann+x@example.com") },
			method: "GET", uri: "/api/v1/users/ann+x@example.com",
			want: wantUser,
		},
		{
			name: "update user: set the name, clear the email", status: 200, answer: user,
			call: func(c *client.Client) (any, error) {
				return c.UpdateUser(ctx, "u1", client.UpdateUserRequest{Email: &empty, Name: &name})
			},
			method: "PATCH", uri: "/api/v1/users/u1", body: `{"email":"","name":"Ann B"}`,
			want: wantUser,
		},
		{
			name: "delete user", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.DeleteUser(ctx, wallet) },
			method: "DELETE", uri: "/api/v1/users/" + wallet,
		},
		{
			name: "list installation keys", status: 200, answer: `{"items":[` + key + `]}`,
			call:   func(c *client.Client) (any, error) { return c.ListInstallationKeys(ctx, client.ListOptions{}) },
			method: "GET", uri: "/api/v1/keys",
			want: client.List[client.APIKey]{Items: []client.APIKey{wantKey}},
		},
		{
			name: "create installation key", status: 201, answer: `{"id":"k2","name":"ops","prefix":"pdk_ffee00","role":"admin","created_at":"` + stamp + `","key":"pdk_secret"}`,
			call:   func(c *client.Client) (any, error) { return c.CreateInstallationKey(ctx, "ops") },
			method: "POST", uri: "/api/v1/keys", body: `{"name":"ops"}`,
			want: client.CreatedKey{APIKey: client.APIKey{ID: "k2", Name: "ops", Prefix: "pdk_ffee00", Role: "admin", CreatedAt: mustTime(stamp)}, Key: "pdk_secret"},
		},
		{
			name: "revoke installation key", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.RevokeInstallationKey(ctx, keyID) },
			method: "DELETE", uri: "/api/v1/keys/" + keyID,
		},
		{
			name: "list org members", status: 200, answer: `{"items":[` + member + `]}`,
			call: func(c *client.Client) (any, error) {
				return c.ListOrgMembers(ctx, "acme", client.ListOptions{Limit: 10})
			},
			method: "GET", uri: "/api/v1/org/acme/members?limit=10",
			want: client.List[client.OrgMember]{Items: []client.OrgMember{wantMember}},
		},
		{
			name: "add org member", status: 201, answer: member,
			call: func(c *client.Client) (any, error) {
				return c.AddOrgMember(ctx, "acme", client.AddOrgMemberRequest{Member: "ann@example.com", Role: client.RoleAdmin})
			},
			method: "POST", uri: "/api/v1/org/acme/members", body: `{"member":"ann@example.com","role":"admin"}`,
			want: client.AddedMember{Member: &wantMember},
		},
		{
			name: "invite to an org", status: 202, answer: invitation,
			call: func(c *client.Client) (any, error) {
				return c.AddOrgMember(ctx, "acme", client.AddOrgMemberRequest{Member: "bob@example.com"})
			},
			method: "POST", uri: "/api/v1/org/acme/members", body: `{"member":"bob@example.com","role":""}`,
			want: client.AddedMember{Invitation: &wantInvitation},
		},
		{
			name: "list an org's invitations", status: 200, answer: `{"items":[` + invitation + `]}`,
			call:   func(c *client.Client) (any, error) { return c.ListOrgInvitations(ctx, "acme", client.ListOptions{}) },
			method: "GET", uri: "/api/v1/org/acme/invitations",
			want: client.List[client.Invitation]{Items: []client.Invitation{wantInvitation}},
		},
		{
			name: "revoke an invitation", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.RevokeInvitation(ctx, "acme", "i1") },
			method: "DELETE", uri: "/api/v1/org/acme/invitations/i1",
		},
		{
			name: "list my invitations", status: 200, answer: `{"items":[` + invitation + `]}`,
			call:   func(c *client.Client) (any, error) { return c.ListInvitations(ctx, client.ListOptions{Limit: 5}) },
			method: "GET", uri: "/api/v1/invitations?limit=5",
			want: client.List[client.Invitation]{Items: []client.Invitation{wantInvitation}},
		},
		{
			name: "accept an invitation", status: 200, answer: member,
			call:   func(c *client.Client) (any, error) { return c.AcceptInvitation(ctx, "i1") },
			method: "POST", uri: "/api/v1/invitations/i1/accept",
			want: wantMember,
		},
		{
			name: "decline an invitation", status: 200, answer: invitation,
			call:   func(c *client.Client) (any, error) { return c.DeclineInvitation(ctx, "i1") },
			method: "POST", uri: "/api/v1/invitations/i1/decline",
			want: wantInvitation,
		},
		{
			name: "set an org member's role", status: 200, answer: member,
			call: func(c *client.Client) (any, error) {
				return c.SetOrgMemberRole(ctx, "acme", "ann@example.com", client.SetRoleRequest{Role: client.RoleAdmin})
			},
			method: "PATCH", uri: "/api/v1/org/acme/members/ann@example.com", body: `{"role":"admin"}`,
			want: wantMember,
		},
		{
			name: "remove org member", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.RemoveOrgMember(ctx, "acme", "u1") },
			method: "DELETE", uri: "/api/v1/org/acme/members/u1",
		},
		{
			name: "list keys", status: 200, answer: `{"items":[` + key + `],"next_cursor":"n"}`,
			call:   func(c *client.Client) (any, error) { return c.ListKeys(ctx, "acme", client.ListOptions{Cursor: "x"}) },
			method: "GET", uri: "/api/v1/org/acme/keys?cursor=x",
			want: client.List[client.APIKey]{Items: []client.APIKey{wantKey}, NextCursor: "n"},
		},
		{
			name: "create key that expires in a while", status: 201, answer: `{"id":"k3","name":"ci","prefix":"pdk_123456","role":"viewer","org_id":"o1","created_at":"` + stamp + `","key":"pdk_plain"}`,
			call: func(c *client.Client) (any, error) {
				return c.CreateKey(ctx, "acme", client.CreateKeyRequest{Name: "ci", Member: wallet, Role: client.RoleViewer, Workspace: "dev", ExpiresIn: "720h"})
			},
			method: "POST", uri: "/api/v1/org/acme/keys",
			body: `{"name":"ci","member":"` + wallet + `","role":"viewer","workspace":"dev","expires_in":"720h"}`,
			want: client.CreatedKey{APIKey: client.APIKey{ID: "k3", Name: "ci", Prefix: "pdk_123456", Role: "viewer", OrgID: "o1", CreatedAt: mustTime(stamp)}, Key: "pdk_plain"},
		},
		{
			name: "create key that expires at a time", status: 201, answer: `{"id":"k4","key":"pdk_plain"}`,
			call: func(c *client.Client) (any, error) {
				return c.CreateKey(ctx, "acme", client.CreateKeyRequest{ExpiresAt: &expires})
			},
			method: "POST", uri: "/api/v1/org/acme/keys", body: `{"expires_at":"` + stamp + `"}`,
		},
		{
			name: "revoke key", status: 204,
			call:   func(c *client.Client) (any, error) { return nil, c.RevokeKey(ctx, "acme", keyID) },
			method: "DELETE", uri: "/api/v1/org/acme/keys/" + keyID,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := canned(t, tt.status, tt.answer)
			got, err := tt.call(c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if rec.method != tt.method || rec.uri != tt.uri {
				t.Errorf("request = %s %s, want %s %s", rec.method, rec.uri, tt.method, tt.uri)
			}
			if rec.auth != "Bearer pdk_test" {
				t.Errorf("Authorization = %q", rec.auth)
			}
			switch {
			case tt.body == "" && (rec.body != "" || rec.contentType != ""):
				t.Errorf("sent body %q (Content-Type %q), want none", rec.body, rec.contentType)
			case tt.body != "" && (rec.contentType != "application/json" || !jsonEqual(t, rec.body, tt.body)):
				t.Errorf("sent %s (Content-Type %q), want %s", rec.body, rec.contentType, tt.body)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestIdentityBadSegmentsSendNothing(t *testing.T) {
	ctx := t.Context()
	c, rec := canned(t, 200, `{}`)
	calls := map[string]func() error{
		"empty user":       func() error { _, err := c.GetUser(ctx, ""); return err },
		"dotdot user":      func() error { return c.DeleteUser(ctx, "..") },
		"empty key id":     func() error { return c.RevokeKey(ctx, "acme", "") },
		"empty member":     func() error { return c.RemoveOrgMember(ctx, "acme", "") },
		"empty org's keys": func() error { _, err := c.ListKeys(ctx, "", client.ListOptions{}); return err },
		"dot install key":  func() error { return c.RevokeInstallationKey(ctx, ".") },
		"empty invitation": func() error { _, err := c.AcceptInvitation(ctx, ""); return err },
		"dotdot decline":   func() error { _, err := c.DeclineInvitation(ctx, ".."); return err },
		"empty revoke":     func() error { return c.RevokeInvitation(ctx, "acme", "") },
		"empty org invite": func() error {
			_, err := c.AddOrgMember(ctx, "", client.AddOrgMemberRequest{Member: "a@b.io"})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, client.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
			if rec.method != "" {
				t.Fatalf("a request was sent: %s %s", rec.method, rec.uri)
			}
		})
	}
}

// signInServer answers a challenge and a session like the server: the
// session is opened only for the signature "signed:" + the message it
// issued, and only a request with the token passes GET /api/v1/me.
func signInServer(t *testing.T) (url string, requests *[]string) {
	t.Helper()
	const message = "example.com wants you to sign in to paddock\nNonce: n1"
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "POST /api/auth/challenge":
			var req client.AuthChallengeRequest
			_ = json.Unmarshal(b, &req)
			w.WriteHeader(201)
			_ = json.NewEncoder(w).Encode(client.AuthChallenge{Nonce: "n1", Address: req.Address, Message: message})
		case "POST /api/auth/session":
			var req client.AuthSessionRequest
			_ = json.Unmarshal(b, &req)
			if req.Nonce != "n1" || req.Signature != "signed:"+message {
				w.WriteHeader(401)
				_, _ = io.WriteString(w, `{"code":"wrong_signer","message":"no"}`)
				return
			}
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{"token":"v4.local.tok","session_id":"s1","user":{"id":"u1"}}`)
		case "GET /api/v1/me":
			if r.Header.Get("Authorization") != "Bearer v4.local.tok" {
				w.WriteHeader(401)
				_, _ = io.WriteString(w, `{"code":"invalid_session","message":"no"}`)
				return
			}
			_, _ = io.WriteString(w, `{"credential":"session:s1","user":{"id":"u1"},"memberships":[]}`)
		case "DELETE /api/auth/session":
			w.WriteHeader(204)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &seen
}

// TestSignIn: SignIn signs the message the server issued, needs no
// credential, and the token then works as a bearer credential.
func TestSignIn(t *testing.T) {
	ctx := t.Context()
	url, seen := signInServer(t)
	anon, err := client.New(url, "")
	if err != nil {
		t.Fatal(err)
	}
	var signed []string
	s, err := anon.SignIn(ctx, "0xabc", func(msg string) (string, error) {
		signed = append(signed, msg)
		return "signed:" + msg, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Token != "v4.local.tok" || s.SessionID != "s1" || s.User.ID != "u1" || len(signed) != 1 {
		t.Fatalf("session %+v, signed %q", s, signed)
	}
	user, err := client.New(url, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Me(ctx)
	if err != nil || me.Credential != "session:s1" {
		t.Fatalf("me = %+v, %v", me, err)
	}
	if err := user.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /api/auth/challenge ", "POST /api/auth/session ",
		"GET /api/v1/me Bearer v4.local.tok", "DELETE /api/auth/session Bearer v4.local.tok",
	}
	if strings.Join(*seen, "|") != strings.Join(want, "|") {
		t.Fatalf("requests %q, want %q", *seen, want)
	}

	t.Run("a wrong signature is the server's refusal", func(t *testing.T) {
		_, err := anon.SignIn(ctx, "0xabc", func(string) (string, error) { return "0xbad", nil })
		if !client.IsCode(err, "wrong_signer") || !errors.Is(err, client.ErrUnauthenticated) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a signer's error opens no session", func(t *testing.T) {
		n := len(*seen)
		boom := errors.New("the wallet said no")
		_, err := anon.SignIn(ctx, "0xabc", func(string) (string, error) { return "", boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		if got := (*seen)[n:]; len(got) != 1 || got[0] != "POST /api/auth/challenge " {
			t.Fatalf("requests after the challenge: %q", got)
		}
	})
}
