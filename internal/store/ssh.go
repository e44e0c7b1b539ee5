package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// SSH
//
// Vocabulary:
//
//   - SSHKey: a public key a user signs in to the SSH gateway with (see
//     internal/sshgw). Its fingerprint, "SHA256:" and the unpadded base64
//     of the key's SHA-256 as `ssh-keygen -lf` prints it, is unique across
//     the installation: a key authenticates one user.
//   - Scope: an SSH key registered with an API key is confined as that API
//     key was: to its org (OrgID), to its workspace when narrowed
//     (WorkspaceID), and to its role at most (Role), so a narrowed or
//     read-only key cannot mint a wider credential. A key registered with
//     a sign-in session has no scope: it acts with the user's own
//     memberships, as a session does.
// ---------------------------------------------------------------------------

// SSHKey is a user's public key for the SSH gateway.
type SSHKey struct {
	ID     string
	UserID string
	Name   string
	// Fingerprint is "SHA256:<base64>", unique.
	Fingerprint string
	// PublicKey is the key in authorized_keys form without a comment:
	// "<type> <base64>".
	PublicKey string
	// OrgID, WorkspaceID and Role confine the key; all empty for none.
	// WorkspaceID needs OrgID, and OrgID and Role go together.
	OrgID       string
	WorkspaceID string
	Role        string
	// APIKeyID is the API key that registered it, which it lives no
	// longer than; "" when a sign-in session did (it then lives as long
	// as its user).
	APIKeyID  string
	CreatedAt time.Time
}

// SSHQueries keep SSH keys. (The runtime an SSH user name means is found
// with RuntimeQueries.FindRuntimesByIDPrefix.)
type SSHQueries interface {
	// CreateSSHKey inserts k; a fingerprint already registered (by anyone)
	// is ErrConflict with the code ssh_key_exists.
	CreateSSHKey(ctx context.Context, k SSHKey) error
	GetSSHKey(ctx context.Context, id string) (SSHKey, error)
	GetSSHKeyByFingerprint(ctx context.Context, fingerprint string) (SSHKey, error)
	// ListSSHKeys lists a user's keys, oldest first.
	ListSSHKeys(ctx context.Context, userID string, page Page) ([]SSHKey, string, error)
	// DeleteSSHKey deletes userID's key id; a key of another user is
	// ErrNotFound, as a missing one.
	DeleteSSHKey(ctx context.Context, userID, id string) error
}
