package api

import (
	"net"
	"net/http"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// SSH: the caller's public keys for the SSH gateway (internal/sshgw), and
// how to reach it. The access service keeps the rules (iam sshkeys.go):
// what scope a key registered with an API key or a session has.

func sshKeyOut(k store.SSHKey) client.SSHKey {
	return client.SSHKey{
		ID: k.ID, Name: k.Name, Fingerprint: k.Fingerprint, PublicKey: k.PublicKey,
		OrgID: k.OrgID, WorkspaceID: k.WorkspaceID, Role: k.Role, CreatedAt: k.CreatedAt,
	}
}

// listSSHKeys: GET /api/v1/me/ssh-keys.
func (a *API) listSSHKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := a.iam.SSHKeysOf(r.Context(), identity(r))
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ks, next, err := keys.List(r.Context(), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ks, next, sshKeyOut))
	return nil
}

// addSSHKey: POST /api/v1/me/ssh-keys.
func (a *API) addSSHKey(w http.ResponseWriter, r *http.Request) error {
	keys, err := a.iam.SSHKeysOf(r.Context(), identity(r))
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
	k, err := keys.Add(r.Context(), iam.SSHKeySpec{PublicKey: pub, Fingerprint: fp, Comment: comment, Name: req.Name})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sshKeyOut(k))
	return nil
}

// deleteSSHKey: DELETE /api/v1/me/ssh-keys/{key_id}. Connections the key
// opened end at the gateway's next check (sshgw.Config.Recheck).
func (a *API) deleteSSHKey(w http.ResponseWriter, r *http.Request) error {
	keys, err := a.iam.SSHKeysOf(r.Context(), identity(r))
	if err != nil {
		return err
	}
	if err := keys.Delete(r.Context(), r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sshInfo: GET /api/v1/ssh, the gateway's address and host key (mounted
// only when the gateway is on).
func (a *API) sshInfo(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, client.SSHInfo{Address: a.sshAddress(r), HostKey: a.ssh.HostKey, Fingerprint: a.ssh.Fingerprint})
	return nil
}

// sshAddress is where the gateway is reached, as r's caller reaches the
// API.
func (a *API) sshAddress(r *http.Request) string {
	addr := a.ssh.Address
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		// The gateway listens on every interface: it is reached where the
		// API is.
		addr = net.JoinHostPort(sshHostOf(r.Host), port)
	}
	return addr
}

// runtimeSSH is what connecting to the runtime over the SSH gateway
// takes: the gateway's address and host key, the user (the runtime's
// id), and the command. The caller needs the member role, as the gateway
// asks of the key it signs in with.
func (a *API) runtimeSSH(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	addr := a.sshAddress(r)
	cmd := "ssh " + rt.ID + "@" + addr
	if host, port, err := net.SplitHostPort(addr); err == nil {
		cmd = "ssh -p " + port + " " + rt.ID + "@" + host
	}
	writeJSON(w, http.StatusOK, client.RuntimeSSH{
		Address: addr, HostKey: a.ssh.HostKey, Fingerprint: a.ssh.Fingerprint, User: rt.ID, Command: cmd,
	})
	return nil
}

// sshHostOf is the host of a Host header, without its port.
func sshHostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
