package api

import (
	"net/http"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// API keys, and wallet sign-in's sessions: the access service keeps the
// rules (iam keys.go, signin.go): who makes which key, with what role.

func keyOut(k store.APIKey) client.APIKey {
	return client.APIKey{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, Role: k.Role,
		OrgID: k.OrgID, UserID: k.UserID, WorkspaceID: k.WorkspaceID, CreatedBy: k.CreatedBy,
		CreatedAt: k.CreatedAt, ExpiresAt: timePtr(k.ExpiresAt), RevokedAt: timePtr(k.RevokedAt),
	}
}

func (a *API) createKey(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.org(r); err != nil {
		return err
	}
	var req client.CreateKeyRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	spec := iam.KeySpec{Name: req.Name, Member: req.Member, Role: req.Role, Workspace: req.Workspace, ExpiresAt: req.ExpiresAt, ExpiresIn: req.ExpiresIn}
	plain, k, err := a.iam.CreateKey(r.Context(), identity(r), access(r), spec)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.CreatedKey{APIKey: keyOut(k), Key: plain})
	return nil
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request) error {
	_, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	ks, next, err := a.iam.ListKeys(r.Context(), identity(r), access(r), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ks, next, keyOut))
	return nil
}

// revokeKey revokes a key of the org: one's own, or any for an admin.
// Streams the key opened end at once.
func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.org(r); err != nil {
		return err
	}
	kid := r.PathValue("key_id")
	if err := a.iam.RevokeKey(r.Context(), identity(r), access(r), kid); err != nil {
		return err
	}
	a.live.endCredential("key:" + kid)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) listInstallationKeys(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ks, next, err := a.iam.ListInstallationKeys(r.Context(), page)
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
	plain, k, err := a.iam.CreateInstallationKey(r.Context(), identity(r), req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.CreatedKey{APIKey: keyOut(k), Key: plain})
	return nil
}

// revokeInstallationKey revokes any key of the installation.
func (a *API) revokeInstallationKey(w http.ResponseWriter, r *http.Request) error {
	kid := r.PathValue("key_id")
	if err := a.iam.RevokeInstallationKey(r.Context(), kid); err != nil {
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
// session. A refusal is logged with the client's address and why.
func (a *API) createSession(w http.ResponseWriter, r *http.Request) error {
	var req client.AuthSessionRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	token, sess, u, err := a.signin.OpenSession(r.Context(), req.Nonce, req.Signature)
	if err != nil {
		if pe, ok := errdefs.Public(err); ok {
			a.logger.InfoContext(r.Context(), "authentication failed", "client", a.clientAddr(r), "reason", pe.Code, "method", r.Method, "path", r.URL.Path)
		}
		return err
	}
	writeJSON(w, http.StatusCreated, client.AuthSession{Token: token, SessionID: sess.ID, User: userOut(u), ExpiresAt: sess.ExpiresAt})
	return nil
}

// deleteSession signs the caller's session out; its streams end.
func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	if err := a.signin.SignOut(r.Context(), id); err != nil {
		return err
	}
	a.live.endCredential(id.Credential())
	w.WriteHeader(http.StatusNoContent)
	return nil
}
