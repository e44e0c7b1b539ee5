package client

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/crypto/ssh"
)

// SSH: the gateway built into the server (`ssh -p 2222 <runtime>@<host>`)
// and the public keys users sign in to it with. A key authenticates its
// user; the SSH user name names the runtime.

// SSHInfo returns the gateway's address and host key; a server whose
// gateway is off has no such route: not found, with the code
// "route_not_found".
func (c *Client) SSHInfo(ctx context.Context) (SSHInfo, error) {
	return call[SSHInfo](ctx, c, http.MethodGet, routeOf("/api/v1/ssh"), nil, nil)
}

// ListSSHKeys lists one page of the caller's SSH keys, oldest first. A key
// an org admin made for the user lists only the SSH keys it registered.
func (c *Client) ListSSHKeys(ctx context.Context, opts ListOptions) (List[SSHKey], error) {
	return call[List[SSHKey]](ctx, c, http.MethodGet, routeOf("/api/v1/me/ssh-keys"), opts.query(), nil)
}

// AddSSHKey registers a public key for the caller's user. A key already
// registered (by anyone) is a conflict with the code "ssh_key_exists"; a
// credential without a user (the installation admin's key) is refused
// with "no_user".
func (c *Client) AddSSHKey(ctx context.Context, req AddSSHKeyRequest) (SSHKey, error) {
	return call[SSHKey](ctx, c, http.MethodPost, routeOf("/api/v1/me/ssh-keys"), nil, req)
}

// DeleteSSHKey removes one of the caller's SSH keys; connections it
// authenticated end within the gateway's recheck interval.
func (c *Client) DeleteSSHKey(ctx context.Context, keyID string) error {
	return c.callDiscard(ctx, http.MethodDelete, routeOf("/api/v1/me/ssh-keys", keyID), nil, nil)
}

// GenerateSSHKey makes an ed25519 key pair: the private key in OpenSSH's
// format (PEM, unencrypted; keep it 0600) and the public key in
// authorized_keys form with comment.
func GenerateSSHKey(comment string) (private []byte, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, "", err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, "", err
	}
	public = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
	if comment != "" {
		public += " " + comment
	}
	return pem.EncodeToMemory(block), public, nil
}

// SSHFingerprint returns the SHA256 fingerprint of a public key in
// authorized_keys form, as `ssh-keygen -lf` prints it.
func SSHFingerprint(authorizedKey string) (string, error) {
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorizedKey))
	if err != nil {
		return "", fmt.Errorf("paddock: not a public key in authorized_keys form: %w", err)
	}
	return ssh.FingerprintSHA256(k), nil
}
