package client

import "time"

// SSHKey is a public key its user signs in to the SSH gateway with.
type SSHKey struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Fingerprint is "SHA256:<base64>", as `ssh-keygen -lf` prints it.
	Fingerprint string `json:"fingerprint"`
	// PublicKey is the key in authorized_keys form, without a comment.
	PublicKey string `json:"public_key"`
	// OrgID, WorkspaceID and Role are the key's scope when an API key
	// registered it: that key's org, its workspace if narrowed, and its
	// role, which the key never exceeds. A key registered with a sign-in
	// session has none and acts with the user's memberships.
	OrgID       string    `json:"org_id,omitempty"`
	WorkspaceID string    `json:"workspace_id,omitempty"`
	Role        string    `json:"role,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// AddSSHKeyRequest registers a public key for the caller's user.
type AddSSHKeyRequest struct {
	Name string `json:"name,omitempty"`
	// PublicKey is one key in authorized_keys form ("ssh-ed25519 AAAA…
	// comment"), as a .pub file holds it.
	PublicKey string `json:"public_key"`
}

// SSHInfo says how to reach the SSH gateway and which host key it
// presents.
type SSHInfo struct {
	// Address is host:port; connect with `ssh -p <port> <runtime>@<host>`,
	// where <runtime> is the runtime's id or its first 12 hex characters.
	Address string `json:"address"`
	// HostKey is the gateway's public host key in authorized_keys form,
	// for a known_hosts line; Fingerprint its SHA256 fingerprint.
	HostKey     string `json:"host_key"`
	Fingerprint string `json:"fingerprint"`
}
