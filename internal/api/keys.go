package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// API keys. A key belongs to a user and is scoped to an org, optionally
// narrowed to one workspace, with a role no higher than its holder's, nor
// than its maker's. Members make keys for themselves; admins for any
// member. The key is shown once; listings show its prefix.

const (
	maxKeyNameLen = 100
	// maxKeyLifetime bounds how far ahead a key may expire.
	maxKeyLifetime = 10 * 365 * 24 * time.Hour
)

// maxKeyChain bounds how many keys back ownUser looks for who made a key.
const maxKeyChain = 16

// ownUser is the caller's user, for what is a user's own across orgs
// (invitations, SSH keys): 400 no_user for a credential without one, as
// the installation admin's. A key with no org has none either: an SSH key
// registered with it would have no scope, as a session's. own is false for
// a key that speaks for its user in its org only: one someone else made
// for them (an admin, or an org key with no user, made before there were
// users), or one made with such a key.
func (a *API) ownUser(r *http.Request, what string) (id auth.Identity, own bool, err error) {
	id = identity(r)
	if id.UserID == "" || (id.SessionID == "" && id.OrgID == "") {
		return id, false, errdefs.InvalidArgument("no_user", "%s belong to a user, and this credential has none: use a member's key or sign in", what)
	}
	if id.SessionID != "" {
		return id, true, nil
	}
	if id.MakerUserID != "" {
		return id, false, nil
	}
	// Back through what made the key: the user's own keys, up to a
	// session (the user's: another's would have made them the maker),
	// the installation admin or the server.
	keyID := id.KeyID
	for range maxKeyChain {
		k, err := a.store.GetAPIKey(r.Context(), keyID)
		switch {
		case errdefs.IsNotFound(err):
			return id, false, nil
		case err != nil:
			return id, false, err
		case k.OrgID == "":
			return id, true, nil
		case k.MakerUserID != "" || k.UserID != id.UserID:
			return id, false, nil
		}
		kind, made, _ := strings.Cut(k.CreatedBy, ":")
		if kind != "key" {
			return id, true, nil
		}
		keyID = made
	}
	return id, false, nil
}

func keyOut(k store.APIKey) client.APIKey {
	return client.APIKey{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, Role: k.Role,
		OrgID: k.OrgID, UserID: k.UserID, WorkspaceID: k.WorkspaceID, CreatedBy: k.CreatedBy,
		CreatedAt: k.CreatedAt, ExpiresAt: timePtr(k.ExpiresAt), RevokedAt: timePtr(k.RevokedAt),
	}
}

// expiry reads when a key asked for expires: zero for never.
func (a *API) expiry(at *time.Time, in string) (time.Time, error) {
	now := a.now()
	var t time.Time
	switch {
	case at != nil && in != "":
		return t, errdefs.InvalidArgument("invalid_expiry", "give expires_at or expires_in, not both")
	case at != nil:
		t = at.UTC()
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return t, errdefs.InvalidArgument("invalid_expiry", "expires_in %q must be a positive duration such as 720h", in)
		}
		t = now.Add(d)
	default:
		return t, nil
	}
	if !t.After(now) || t.Sub(now) > maxKeyLifetime {
		return t, errdefs.InvalidArgument("invalid_expiry", "a key expires in the future, within ten years")
	}
	return t.Truncate(time.Microsecond), nil
}

func (a *API) createKey(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return err
	}
	var req client.CreateKeyRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if len(req.Name) > maxKeyNameLen {
		return errdefs.InvalidArgument("invalid_name", "a key's name is at most %d characters", maxKeyNameLen)
	}
	expires, err := a.expiry(req.ExpiresAt, req.ExpiresIn)
	if err != nil {
		return err
	}
	id, acc := identity(r), access(r)
	// The holder: the caller, or the member named (an admin's call). Below
	// admin every other name is refused alike, so it tells nothing about
	// who exists.
	holderID := id.UserID
	if req.Member != "" {
		u, err := a.memberOrNamed(ctx, o.ID, req.Member)
		switch {
		case !acc.Role.AtLeast(auth.RoleAdmin) && (err != nil || u.ID != id.UserID):
			return errdefs.PermissionDenied("role_too_low", "making a key for another member needs the admin role")
		case err != nil:
			return err
		}
		holderID = u.ID
	}
	if holderID == "" {
		return errdefs.InvalidArgument("member_required", "name the member the key is for: this credential has no user of its own")
	}
	m, err := a.store.GetOrgMember(ctx, o.ID, holderID)
	if errdefs.IsNotFound(err) {
		return errMemberNotFound(req.Member, o.Name)
	}
	if err != nil {
		return err
	}
	role := auth.MinRole(auth.Role(m.Role), acc.Role)
	if req.Role != "" {
		asked, err := auth.ParseRole(req.Role)
		if err != nil {
			return err
		}
		if !role.AtLeast(asked) {
			return errdefs.PermissionDenied("role_too_high", "a key's role is at most its holder's (%s) and its maker's (%s)", m.Role, acc.Role)
		}
		role = asked
	}
	spec := store.APIKey{Name: req.Name, Role: string(role), OrgID: o.ID, UserID: holderID, CreatedBy: id.Credential(), ExpiresAt: expires}
	// Made with a key someone else made for the holder, it is as much
	// theirs as that key.
	spec.MakerUserID = id.MakerUserID
	if id.UserID != "" && id.UserID != holderID {
		spec.MakerUserID = id.UserID
	}
	if req.Workspace != "" {
		if !slugRE.MatchString(req.Workspace) {
			return errdefs.InvalidArgument("invalid_workspace", "%q is not a workspace name", req.Workspace)
		}
		ws, err := a.store.GetWorkspaceByName(ctx, o.ID, req.Workspace)
		if err == nil && !acc.SeesWorkspace(ws.ID) {
			err = errdefs.ErrNotFound
		}
		if errdefs.IsNotFound(err) {
			return errdefs.NotFound("workspace_not_found", "workspace %q not found in org %q", req.Workspace, o.Name)
		}
		if err != nil {
			return err
		}
		if !role.AtLeast(auth.RoleAdmin) {
			in, err := a.store.IsWorkspaceMember(ctx, ws.ID, holderID)
			if err != nil {
				return err
			}
			if !in {
				return errdefs.InvalidArgument("not_a_workspace_member", "the holder is not a member of workspace %q, so the key would see nothing", ws.Name)
			}
		}
		spec.WorkspaceID = ws.ID
	}
	plain, k, err := a.keys.Create(ctx, spec, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.CreatedKey{APIKey: keyOut(k), Key: plain})
	return nil
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request) error {
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	f := store.APIKeyFilter{OrgID: o.ID}
	if id := identity(r); !access(r).Role.AtLeast(auth.RoleAdmin) {
		// Below admin, a caller sees its own keys.
		if id.UserID == "" {
			k, err := a.store.GetAPIKey(r.Context(), id.KeyID)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, listOf([]store.APIKey{k}, "", keyOut))
			return nil
		}
		f.UserID = id.UserID
	}
	ks, next, err := a.store.ListAPIKeys(r.Context(), f, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ks, next, keyOut))
	return nil
}

// revokeKey revokes a key of the org: one's own, or any for an admin. A
// key the caller may not see is not found. Revoking takes effect on the
// key's next request; revoking again changes nothing.
func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return err
	}
	kid := r.PathValue("key_id")
	if !isUUID(kid) {
		return errdefs.InvalidArgument("invalid_key_id", "%q is not a key id (a UUID)", kid)
	}
	k, err := a.store.GetAPIKey(ctx, kid)
	id := identity(r)
	if err == nil && (k.OrgID != o.ID || (!access(r).Role.AtLeast(auth.RoleAdmin) && (k.UserID == "" || k.UserID != id.UserID) && k.ID != id.KeyID)) {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return errdefs.NotFound("key_not_found", "key %s not found", kid)
	}
	if err != nil {
		return err
	}
	if _, err := a.store.RevokeAPIKey(ctx, k.ID, a.now()); err != nil {
		return err
	}
	a.live.endCredential("key:" + k.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) listInstallationKeys(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ks, next, err := a.store.ListAPIKeys(r.Context(), store.APIKeyFilter{Installation: true}, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ks, next, keyOut))
	return nil
}

func (a *API) createInstallationKey(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	if len(req.Name) > maxKeyNameLen {
		return errdefs.InvalidArgument("invalid_name", "a key's name is at most %d characters", maxKeyNameLen)
	}
	plain, k, err := a.keys.Create(r.Context(), store.APIKey{Name: req.Name, Role: string(auth.RoleAdmin), CreatedBy: identity(r).Credential()}, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.CreatedKey{APIKey: keyOut(k), Key: plain})
	return nil
}

// revokeInstallationKey revokes any key of the installation.
func (a *API) revokeInstallationKey(w http.ResponseWriter, r *http.Request) error {
	kid := r.PathValue("key_id")
	if !isUUID(kid) {
		return errdefs.InvalidArgument("invalid_key_id", "%q is not a key id (a UUID)", kid)
	}
	if _, err := a.store.RevokeAPIKey(r.Context(), kid, a.now()); err != nil {
		if errdefs.IsNotFound(err) {
			return errdefs.NotFound("key_not_found", "key %s not found", kid)
		}
		return err
	}
	a.live.endCredential("key:" + kid)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// authChallenge starts a wallet sign-in.
func (a *API) authChallenge(w http.ResponseWriter, r *http.Request) error {
	var req client.AuthChallengeRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	c, err := a.signin.Challenge(r.Context(), req.Address)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.AuthChallenge{Nonce: c.Nonce, Address: c.Wallet, Message: c.Message, ExpiresAt: c.ExpiresAt})
	return nil
}

// createSession answers a challenge with its signature and opens a
// session.
func (a *API) createSession(w http.ResponseWriter, r *http.Request) error {
	var req client.AuthSessionRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if req.Nonce == "" || len(req.Nonce) > 64 {
		a.logger.InfoContext(r.Context(), "authentication failed", "client", a.clientAddr(r), "reason", "invalid_nonce", "method", r.Method, "path", r.URL.Path)
		return errdefs.InvalidArgument("invalid_nonce", "nonce is the one a challenge gave")
	}
	token, sess, u, err := a.signin.Session(r.Context(), req.Nonce, req.Signature)
	if err != nil {
		if pe, ok := errdefs.Public(err); ok {
			a.logger.InfoContext(r.Context(), "authentication failed", "client", a.clientAddr(r), "reason", pe.Code, "method", r.Method, "path", r.URL.Path)
		}
		return err
	}
	writeJSON(w, http.StatusCreated, client.AuthSession{Token: token, SessionID: sess.ID, User: userOut(u), ExpiresAt: sess.ExpiresAt})
	return nil
}

// deleteSession signs the caller's session out.
func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	if id.SessionID == "" || a.signin == nil {
		return errdefs.InvalidArgument("not_a_session", "sign out with the session token itself; revoke an API key with DELETE …/keys/{key_id}")
	}
	if err := a.signin.Revoke(r.Context(), id.SessionID); err != nil {
		return err
	}
	a.live.endCredential(id.Credential())
	w.WriteHeader(http.StatusNoContent)
	return nil
}
