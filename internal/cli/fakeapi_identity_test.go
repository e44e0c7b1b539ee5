package cli_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

// identityAPI is the fake API with the routes of wallet sign-in, the
// caller, users, org and workspace members, and keys added, in memory.
// Like fakeAPI it tests the CLI's encoding and output, not the server's
// behaviour; but it checks a sign-in's signature for real, with
// wallet.Verify over the message it issued, so a CLI that signs wrongly
// cannot sign in.
type identityAPI struct {
	*fakeAPI

	users     []client.User
	members   []client.OrgMember
	wsMembers []client.WorkspaceMember
	keys      []client.APIKey
	// challenges are the challenges issued and not yet answered, by
	// nonce; sessions the live session tokens, and the user of each.
	challenges map[string]client.AuthChallenge
	sessions   map[string]string
	// signedOut lists the tokens DELETE /api/auth/session ended.
	signedOut []string
	// domain, when set, is the server the challenges name instead of
	// this one (a relay of another server's challenge).
	domain string
}

const goodKeyID = "00000000-0000-4000-8000-00000000beef"

// startIdentityAPI starts the fake with org acme and workspace dev; the
// good key is the installation admin's.
func startIdentityAPI(t *testing.T) (*identityAPI, string) {
	t.Helper()
	f := &fakeAPI{key: goodKey, bodies: map[string]string{}, queries: map[string]string{}}
	i := &identityAPI{fakeAPI: f, challenges: map[string]client.AuthChallenge{}, sessions: map[string]string{}}
	mux := http.NewServeMux()
	i.routes(mux)
	base := f.handler()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A live session is as good as the key on the base fake's routes.
		if _, ok := i.session(r); ok {
			r.Header.Set("Authorization", "Bearer "+goodKey)
		}
		base.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := clitest.Env(srv.URL, goodKey)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	return i, srv.URL
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// session returns the user of the request's live session token.
func (i *identityAPI) session(r *http.Request) (string, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	u, ok := i.sessions[bearer(r)]
	return u, ok
}

// ended returns the session tokens signed out so far.
func (i *identityAPI) ended() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return slices.Clone(i.signedOut)
}

// strict decodes a JSON body, refusing fields the contract lacks.
func strict(w http.ResponseWriter, body string, v any) bool {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, 400, "invalid_json", err.Error())
		return false
	}
	return true
}

func (i *identityAPI) routes(mux *http.ServeMux) {
	// handle serves a route; open ones need no credential, the others the
	// good key or a live session.
	handle := func(pattern string, open bool, h func(w http.ResponseWriter, r *http.Request, body string)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			_, live := i.session(r)
			if !open && !live && bearer(r) != i.key {
				fail(w, 401, "invalid_api_key", "the API key is not valid")
				return
			}
			i.mu.Lock()
			defer i.mu.Unlock()
			var b bytes.Buffer
			_, _ = b.ReadFrom(r.Body)
			i.bodies[pattern] = b.String()
			i.queries[pattern] = r.URL.RawQuery
			h(w, r, b.String())
		})
	}
	const ws = "/api/v1/org/{org}/ws/{ws}"

	handle("POST /api/auth/challenge", true, func(w http.ResponseWriter, r *http.Request, body string) {
		var req client.AuthChallengeRequest
		if !strict(w, body, &req) {
			return
		}
		addr, err := wallet.ParseAddress(req.Address)
		if err != nil {
			fail(w, 400, "invalid_wallet_address", err.Error())
			return
		}
		nonce := "nonce-" + i.id()
		exp := now().Add(5 * time.Minute)
		domain := r.Host
		if i.domain != "" {
			domain = i.domain
		}
		c := client.AuthChallenge{Nonce: nonce, Address: addr.Lower(), ExpiresAt: exp,
			Message: fmt.Sprintf("%s wants you to sign in to paddock with your Ethereum account:\n%s\n\nNonce: %s\nIssued At: %s\nExpiration Time: %s",
				domain, addr, nonce, fakeNow, exp.Format(time.RFC3339))}
		i.challenges[nonce] = c
		reply(w, 201, c)
	})
	handle("POST /api/auth/session", true, func(w http.ResponseWriter, r *http.Request, body string) {
		var req client.AuthSessionRequest
		if !strict(w, body, &req) {
			return
		}
		c, ok := i.challenges[req.Nonce]
		if !ok {
			fail(w, 401, "invalid_challenge", "the nonce is unknown or was used already: ask for a new challenge")
			return
		}
		delete(i.challenges, req.Nonce)
		sig, err := wallet.ParseSignature(req.Signature)
		if err != nil {
			fail(w, 400, "invalid_signature", err.Error())
			return
		}
		addr, _ := wallet.ParseAddress(c.Address)
		if err := wallet.Verify([]byte(c.Message), sig, addr); err != nil {
			fail(w, 401, "wrong_signer", "the signature is not by the address the challenge names")
			return
		}
		u, ok := i.user(c.Address)
		if !ok {
			fail(w, 401, "unknown_wallet", "no user has this wallet address; an org admin adds it as a member first")
			return
		}
		id := i.id()
		token := "v4.local.session-" + id
		i.sessions[token] = u.ID
		reply(w, 201, client.AuthSession{Token: token, SessionID: id, User: u, ExpiresAt: now().Add(24 * time.Hour)})
	})
	handle("DELETE /api/auth/session", true, func(w http.ResponseWriter, r *http.Request, _ string) {
		if _, ok := i.sessions[bearer(r)]; !ok {
			fail(w, 401, "invalid_session", "the session token is malformed, unknown, expired or revoked")
			return
		}
		delete(i.sessions, bearer(r))
		i.signedOut = append(i.signedOut, bearer(r))
		w.WriteHeader(204)
	})
	handle("GET /api/v1/me", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		userID, ok := i.sessions[bearer(r)]
		if !ok {
			reply(w, 200, client.Me{Credential: "key:" + goodKeyID, Installation: true, Memberships: []client.Membership{},
				Key: &client.APIKey{ID: goodKeyID, Name: "admin", Prefix: goodKey[:8], Role: client.RoleAdmin, CreatedAt: now()}})
			return
		}
		u, _ := i.user(userID)
		me := client.Me{Credential: "session:" + strings.TrimPrefix(bearer(r), "v4.local.session-"), User: &u, Memberships: []client.Membership{}}
		for _, m := range i.members {
			if m.UserID == u.ID {
				o, _ := i.orgByID(m.OrgID)
				me.Memberships = append(me.Memberships, client.Membership{OrgID: o.ID, Org: o.Name, Role: m.Role})
			}
		}
		reply(w, 200, me)
	})

	handle("POST /api/v1/users", false, func(w http.ResponseWriter, r *http.Request, body string) {
		var req client.CreateUserRequest
		if !strict(w, body, &req) {
			return
		}
		if u, err := i.newUser(req.Email, req.Wallet, req.Name); err != nil {
			fail(w, 400, "invalid_user", err.Error())
		} else {
			reply(w, 201, u)
		}
	})
	handle("GET /api/v1/users", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		reply(w, 200, page(r, i.users))
	})
	handle("GET /api/v1/users/{user}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		if u, ok := i.userOf(w, r.PathValue("user")); ok {
			reply(w, 200, u)
		}
	})
	handle("PATCH /api/v1/users/{user}", false, func(w http.ResponseWriter, r *http.Request, body string) {
		u, ok := i.userOf(w, r.PathValue("user"))
		if !ok {
			return
		}
		var req client.UpdateUserRequest
		if !strict(w, body, &req) {
			return
		}
		j := slices.IndexFunc(i.users, func(x client.User) bool { return x.ID == u.ID })
		for dst, v := range map[*string]*string{&u.Email: req.Email, &u.Wallet: req.Wallet, &u.Name: req.Name} {
			if v != nil {
				*dst = *v
			}
		}
		if u.Email == "" && u.Wallet == "" {
			fail(w, 400, "invalid_user", "a user keeps an email or a wallet")
			return
		}
		i.users[j] = u
		reply(w, 200, u)
	})
	handle("DELETE /api/v1/users/{user}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		u, ok := i.userOf(w, r.PathValue("user"))
		if !ok {
			return
		}
		i.users = slices.DeleteFunc(i.users, func(x client.User) bool { return x.ID == u.ID })
		w.WriteHeader(204)
	})

	handle("GET /api/v1/org/{org}/members", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		o, ok := i.orgOf(w, r)
		if !ok {
			return
		}
		var out []client.OrgMember
		for _, m := range i.members {
			if m.OrgID == o.ID {
				out = append(out, m)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("POST /api/v1/org/{org}/members", false, func(w http.ResponseWriter, r *http.Request, body string) {
		o, ok := i.orgOf(w, r)
		if !ok {
			return
		}
		var req client.AddOrgMemberRequest
		if !strict(w, body, &req) {
			return
		}
		u, ok := i.user(req.Member)
		if !ok {
			var err error
			email, addr := req.Member, ""
			if strings.HasPrefix(req.Member, "0x") {
				email, addr = "", req.Member
			}
			if u, err = i.newUser(email, addr, ""); err != nil {
				fail(w, 400, "invalid_member", err.Error())
				return
			}
		}
		m := client.OrgMember{ID: i.id(), OrgID: o.ID, UserID: u.ID, Member: userHandleOf(u), Role: req.Role, User: u, CreatedAt: now()}
		i.members = append(i.members, m)
		reply(w, 201, m)
	})
	handle("PATCH /api/v1/org/{org}/members/{member}", false, func(w http.ResponseWriter, r *http.Request, body string) {
		j, ok := i.memberOf(w, r)
		if !ok {
			return
		}
		var req client.SetRoleRequest
		if !strict(w, body, &req) {
			return
		}
		i.members[j].Role = req.Role
		reply(w, 200, i.members[j])
	})
	handle("DELETE /api/v1/org/{org}/members/{member}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		if j, ok := i.memberOf(w, r); ok {
			i.members = slices.Delete(i.members, j, j+1)
			w.WriteHeader(204)
		}
	})

	handle("GET "+ws+"/members", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		_, x, ok := i.wsOf(w, r)
		if !ok {
			return
		}
		var out []client.WorkspaceMember
		for _, m := range i.wsMembers {
			if m.WorkspaceID == x.ID {
				out = append(out, m)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("POST "+ws+"/members", false, func(w http.ResponseWriter, r *http.Request, body string) {
		_, x, ok := i.wsOf(w, r)
		if !ok {
			return
		}
		var req client.AddMemberRequest
		if !strict(w, body, &req) {
			return
		}
		u, ok := i.userOf(w, req.Member)
		if !ok {
			return
		}
		m := client.WorkspaceMember{ID: i.id(), WorkspaceID: x.ID, UserID: u.ID, Member: userHandleOf(u), CreatedAt: now()}
		i.wsMembers = append(i.wsMembers, m)
		reply(w, 201, m)
	})
	handle("DELETE "+ws+"/members/{member}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		_, x, ok := i.wsOf(w, r)
		if !ok {
			return
		}
		u, ok := i.userOf(w, r.PathValue("member"))
		if !ok {
			return
		}
		i.wsMembers = slices.DeleteFunc(i.wsMembers, func(m client.WorkspaceMember) bool { return m.WorkspaceID == x.ID && m.UserID == u.ID })
		w.WriteHeader(204)
	})

	handle("GET /api/v1/keys", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		reply(w, 200, page(r, i.keysOf("")))
	})
	handle("POST /api/v1/keys", false, func(w http.ResponseWriter, r *http.Request, body string) {
		var req struct {
			Name string `json:"name"`
		}
		if !strict(w, body, &req) {
			return
		}
		reply(w, 201, i.newKey(client.APIKey{Name: req.Name, Role: client.RoleAdmin}))
	})
	handle("DELETE /api/v1/keys/{key_id}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		i.revoke(w, r, "")
	})
	handle("GET /api/v1/org/{org}/keys", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		if o, ok := i.orgOf(w, r); ok {
			reply(w, 200, page(r, i.keysOf(o.ID)))
		}
	})
	handle("POST /api/v1/org/{org}/keys", false, func(w http.ResponseWriter, r *http.Request, body string) {
		o, ok := i.orgOf(w, r)
		if !ok {
			return
		}
		var req client.CreateKeyRequest
		if !strict(w, body, &req) {
			return
		}
		k := client.APIKey{Name: req.Name, Role: cmp.Or(req.Role, client.RoleMember), OrgID: o.ID, ExpiresAt: req.ExpiresAt}
		if req.Member != "" {
			u, ok := i.userOf(w, req.Member)
			if !ok {
				return
			}
			k.UserID = u.ID
		}
		if req.Workspace != "" {
			j := slices.IndexFunc(i.workspaces, func(x client.Workspace) bool { return x.OrgID == o.ID && x.Name == req.Workspace })
			if j < 0 {
				fail(w, 404, "workspace_not_found", fmt.Sprintf("workspace %q not found", req.Workspace))
				return
			}
			k.WorkspaceID = i.workspaces[j].ID
		}
		if req.ExpiresIn != "" {
			d, err := time.ParseDuration(req.ExpiresIn)
			if err != nil || req.ExpiresAt != nil {
				fail(w, 400, "invalid_expiry", "expires_in is a duration such as 720h, and not with expires_at")
				return
			}
			exp := now().Add(d)
			k.ExpiresAt = &exp
		}
		reply(w, 201, i.newKey(k))
	})
	handle("DELETE /api/v1/org/{org}/keys/{key_id}", false, func(w http.ResponseWriter, r *http.Request, _ string) {
		if o, ok := i.orgOf(w, r); ok {
			i.revoke(w, r, o.ID)
		}
	})
}

func userHandleOf(u client.User) string { return cmp.Or(u.Email, u.Wallet, u.Name) }

func (i *identityAPI) newUser(email, addr, name string) (client.User, error) {
	if email == "" && addr == "" {
		return client.User{}, fmt.Errorf("a user needs an email or a wallet")
	}
	if addr != "" {
		a, err := wallet.ParseAddress(addr)
		if err != nil {
			return client.User{}, err
		}
		addr = a.Lower()
	}
	u := client.User{ID: i.id(), Email: email, Wallet: addr, Name: name, CreatedAt: now()}
	i.users = append(i.users, u)
	return u, nil
}

// user finds a user by id, email or wallet address (in any case).
func (i *identityAPI) user(key string) (client.User, bool) {
	for _, u := range i.users {
		if u.ID == key || (u.Email != "" && u.Email == key) || (u.Wallet != "" && strings.EqualFold(u.Wallet, key)) {
			return u, true
		}
	}
	return client.User{}, false
}

func (i *identityAPI) userOf(w http.ResponseWriter, key string) (client.User, bool) {
	u, ok := i.user(key)
	if !ok {
		fail(w, 404, "user_not_found", fmt.Sprintf("user %q not found", key))
	}
	return u, ok
}

func (i *identityAPI) orgByID(id string) (client.Org, bool) {
	for _, o := range i.orgs {
		if o.ID == id {
			return o, true
		}
	}
	return client.Org{}, false
}

func (i *identityAPI) memberOf(w http.ResponseWriter, r *http.Request) (int, bool) {
	o, ok := i.orgOf(w, r)
	if !ok {
		return 0, false
	}
	u, ok := i.userOf(w, r.PathValue("member"))
	if !ok {
		return 0, false
	}
	j := slices.IndexFunc(i.members, func(m client.OrgMember) bool { return m.OrgID == o.ID && m.UserID == u.ID })
	if j < 0 {
		fail(w, 404, "member_not_found", fmt.Sprintf("%q is not a member of %q", r.PathValue("member"), o.Name))
		return 0, false
	}
	return j, true
}

func (i *identityAPI) newKey(k client.APIKey) client.CreatedKey {
	k.ID, k.CreatedAt = i.id(), now()
	plain := fmt.Sprintf("pdk_%048d", i.seq)
	k.Prefix = plain[:10]
	i.keys = append(i.keys, k)
	return client.CreatedKey{APIKey: k, Key: plain}
}

// keysOf lists org's keys; "" lists the installation's own.
func (i *identityAPI) keysOf(org string) []client.APIKey {
	var out []client.APIKey
	for _, k := range i.keys {
		if k.OrgID == org {
			out = append(out, k)
		}
	}
	return out
}

// revoke revokes a key of org; "" is any key of the installation.
func (i *identityAPI) revoke(w http.ResponseWriter, r *http.Request, org string) {
	id := r.PathValue("key_id")
	j := slices.IndexFunc(i.keys, func(k client.APIKey) bool { return k.ID == id && (org == "" || k.OrgID == org) })
	if j < 0 {
		fail(w, 404, "key_not_found", fmt.Sprintf("key %s not found", id))
		return
	}
	at := now()
	i.keys[j].RevokedAt = &at
	w.WriteHeader(204)
}
