package api

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// SSH: the caller's public keys for the SSH gateway (internal/sshgw), and
// how to reach it. A key authenticates its user. One registered with an
// API key keeps that key's scope (its org, its workspace if narrowed, its
// role as a ceiling), so a narrowed or read-only key cannot make itself a
// wider credential; one registered with a sign-in session acts with the
// user's memberships, as the session does.

func sshKeyOut(k store.SSHKey) client.SSHKey {
	return client.SSHKey{
		ID: k.ID, Name: k.Name, Fingerprint: k.Fingerprint, PublicKey: k.PublicKey,
		OrgID: k.OrgID, WorkspaceID: k.WorkspaceID, Role: k.Role, CreatedAt: k.CreatedAt,
	}
}

// listSSHKeys: GET /api/v1/me/ssh-keys.
func (a *API) listSSHKeys(w http.ResponseWriter, r *http.Request) error {
	id, own, err := a.ownUser(r, "SSH keys")
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ks, next, err := a.store.ListSSHKeys(r.Context(), id.UserID, page)
	if err != nil {
		return listError(err)
	}
	if !own {
		// A key made for its user by someone else sees what it
		// registered, not the user's other keys.
		ks = slices.DeleteFunc(ks, func(k store.SSHKey) bool { return k.APIKeyID != id.KeyID })
	}
	writeJSON(w, http.StatusOK, listOf(ks, next, sshKeyOut))
	return nil
}

// addSSHKey: POST /api/v1/me/ssh-keys.
func (a *API) addSSHKey(w http.ResponseWriter, r *http.Request) error {
	id, _, err := a.ownUser(r, "SSH keys")
	if err != nil {
		return err
	}
	var req client.AddSSHKeyRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	pub, fp, comment, err := sshgw.ParsePublicKey(req.PublicKey)
	if err != nil {
		return err
	}
	name := req.Name
	if name == "" {
		name = comment
	}
	if len(name) > maxKeyNameLen || strings.ContainsFunc(name, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		if req.Name == "" {
			name = "" // a comment that would not do as a name is left out
		} else {
			return errdefs.InvalidArgument("invalid_name", "an SSH key's name is at most %d characters on one line", maxKeyNameLen)
		}
	}
	k := store.SSHKey{ID: uuid.NewString(), UserID: id.UserID, Name: name, Fingerprint: fp, PublicKey: pub, CreatedAt: a.now()}
	if id.SessionID == "" {
		// An API key: the SSH key may do what this key may, no more.
		if !id.Role.AtLeast(auth.RoleMember) {
			return errdefs.PermissionDenied("role_too_low", "SSH needs the member role, and this key is a %s's", id.Role)
		}
		k.OrgID, k.WorkspaceID, k.Role, k.APIKeyID = id.OrgID, id.WorkspaceID, string(id.Role), id.KeyID
	}
	if err := a.store.CreateSSHKey(r.Context(), k); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sshKeyOut(k))
	return nil
}

// deleteSSHKey: DELETE /api/v1/me/ssh-keys/{key_id}. Connections the key
// opened end at the gateway's next check (sshgw.Config.Recheck).
func (a *API) deleteSSHKey(w http.ResponseWriter, r *http.Request) error {
	id, own, err := a.ownUser(r, "SSH keys")
	if err != nil {
		return err
	}
	keyID := r.PathValue("key_id")
	errNotFound := errdefs.NotFound("ssh_key_not_found", "ssh key not found")
	if !isUUID(keyID) {
		return errNotFound
	}
	if !own {
		// As in the listing: only what this key registered.
		k, err := a.store.GetSSHKey(r.Context(), keyID)
		if errdefs.IsNotFound(err) || (err == nil && k.APIKeyID != id.KeyID) {
			return errNotFound
		}
		if err != nil {
			return err
		}
	}
	if err := a.store.DeleteSSHKey(r.Context(), id.UserID, keyID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sshInfo: GET /api/v1/ssh, the gateway's address and host key (mounted
// only when the gateway is on).
func (a *API) sshInfo(w http.ResponseWriter, r *http.Request) error {
	addr := a.ssh.Address
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		// The gateway listens on every interface: it is reached where the
		// API is.
		addr = net.JoinHostPort(sshHostOf(r.Host), port)
	}
	writeJSON(w, http.StatusOK, client.SSHInfo{Address: addr, HostKey: a.ssh.HostKey, Fingerprint: a.ssh.Fingerprint})
	return nil
}

// sshHostOf is the host of a Host header, without its port.
func sshHostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
