package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// Public keys (ed25519) for the tests: two distinct ones.
const (
	sshKeyA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILT6y1FZX/RfKHNp450GRRFDFvMWsBPX3gDunIIMcWuj alice@laptop"
	sshKeyB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFs112OteofDoh6xJKibbuFOQBlw9v3CeZy6MJuNYAdv"
)

// TestSSHKeys: a user's own SSH keys. A key registered with an API key
// keeps that key's scope; one registered with a session has none; the
// installation admin has no user to own one; a public key is registered
// once; only its user sees or removes a key.
func TestSSHKeys(t *testing.T) {
	env, clock := identityEnv(t, api.Limits{})
	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: addr})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"})
	narrowed := keyFor(t, env, client.CreateKeyRequest{Member: addr, Role: "member", Workspace: "dev"})
	viewer := keyFor(t, env, client.CreateKeyRequest{Member: addr, Role: "viewer"})
	bobs := keyFor(t, env, client.CreateKeyRequest{Member: "bob@example.com"})

	var ch client.AuthChallenge
	env.Must(t, 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &ch)
	var sess client.AuthSession
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)}).Decode(t, &sess)

	const keys = "/api/v1/me/ssh-keys"
	wantError(t, env.Do(t, "GET", keys, nil), 400, "no_user")
	// A credential without a user learns that before anything about its
	// request.
	wantError(t, env.Do(t, "GET", keys+"?limit=0", nil), 400, "no_user")
	wantError(t, env.Do(t, "DELETE", keys+"/not-a-key", nil), 400, "no_user")
	wantError(t, env.Do(t, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyA}), 400, "no_user")

	var scoped client.SSHKey
	env.MustKey(t, narrowed.Key, 201, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyA}).Decode(t, &scoped)
	if scoped.Name != "alice@laptop" || !strings.HasPrefix(scoped.Fingerprint, "SHA256:") ||
		scoped.PublicKey != strings.TrimSuffix(sshKeyA, " alice@laptop") ||
		scoped.OrgID != narrowed.OrgID || scoped.WorkspaceID != narrowed.WorkspaceID || scoped.Role != "member" {
		t.Fatalf("a key added with a narrowed API key: %+v", scoped)
	}
	// Registered once, by anyone.
	wantError(t, env.DoKey(t, sess.Token, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyA}), 409, "ssh_key_exists")
	wantError(t, env.DoKey(t, bobs.Key, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyA}), 409, "ssh_key_exists")
	// A viewer's key cannot make a key that could open a shell.
	wantError(t, env.DoKey(t, viewer.Key, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyB}), 403, "role_too_low")
	for _, bad := range []string{"", "ssh-ed25519", "not a key", sshKeyA + "\n" + sshKeyB, `command="x" ` + sshKeyB} {
		wantError(t, env.DoKey(t, sess.Token, "POST", keys, client.AddSSHKeyRequest{PublicKey: bad}), 400, "invalid_public_key")
	}

	var mine client.SSHKey
	clock.Advance(time.Second) // listings are oldest first
	env.MustKey(t, sess.Token, 201, "POST", keys, client.AddSSHKeyRequest{Name: "desk", PublicKey: sshKeyB}).Decode(t, &mine)
	if mine.Name != "desk" || mine.OrgID != "" || mine.Role != "" {
		t.Fatalf("a key added with a session: %+v", mine)
	}

	var list client.List[client.SSHKey]
	env.MustKey(t, narrowed.Key, 200, "GET", keys, nil).Decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].ID != scoped.ID || list.Items[1].ID != mine.ID {
		t.Fatalf("list = %+v", list.Items)
	}
	env.MustKey(t, bobs.Key, 200, "GET", keys, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("bob sees %+v", list.Items)
	}

	// Only its user removes a key; to anyone else it does not exist.
	wantError(t, env.DoKey(t, bobs.Key, "DELETE", keys+"/"+mine.ID, nil), 404, "ssh_key_not_found")
	wantError(t, env.DoKey(t, sess.Token, "DELETE", keys+"/not-an-id", nil), 404, "ssh_key_not_found")
	env.MustKey(t, sess.Token, 204, "DELETE", keys+"/"+mine.ID, nil)
	wantError(t, env.DoKey(t, sess.Token, "DELETE", keys+"/"+mine.ID, nil), 404, "ssh_key_not_found")
}

// TestSSHInfoOff: without a gateway, the API has no GET /api/v1/ssh.
func TestSSHInfoOff(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	wantError(t, env.Do(t, "GET", "/api/v1/ssh", nil), 404, "route_not_found")
}

// TestSSHKeysOfAKeyMadeForTheUser: a key an admin made for a member
// speaks for them in its org only: it sees and removes the SSH keys it
// registered, not the user's others.
func TestSSHKeysOfAKeyMadeForTheUser(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "ann@example.com", Role: "admin"})
	ann := keyFor(t, env, client.CreateKeyRequest{Member: "ann@example.com"})
	var made client.CreatedKey
	env.MustKey(t, ann.Key, 201, "POST", "/api/v1/org/acme/keys", client.CreateKeyRequest{Member: addr}).Decode(t, &made)
	var ch client.AuthChallenge
	env.Must(t, 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &ch)
	var sess client.AuthSession
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)}).Decode(t, &sess)

	const keys = "/api/v1/me/ssh-keys"
	var own, scoped client.SSHKey
	env.MustKey(t, sess.Token, 201, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyA}).Decode(t, &own)
	var list client.List[client.SSHKey]
	env.MustKey(t, made.Key, 200, "GET", keys, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("a key made by an admin sees the user's SSH keys: %+v", list.Items)
	}
	wantError(t, env.DoKey(t, made.Key, "DELETE", keys+"/"+own.ID, nil), 404, "ssh_key_not_found")

	env.MustKey(t, made.Key, 201, "POST", keys, client.AddSSHKeyRequest{PublicKey: sshKeyB}).Decode(t, &scoped)
	if scoped.OrgID != made.OrgID || scoped.Role != "member" {
		t.Fatalf("an SSH key added with a key an admin made: %+v", scoped)
	}
	env.MustKey(t, made.Key, 200, "GET", keys, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != scoped.ID {
		t.Fatalf("the admin-made key's SSH keys: %+v", list.Items)
	}
	env.MustKey(t, made.Key, 204, "DELETE", keys+"/"+scoped.ID, nil)
	env.MustKey(t, sess.Token, 200, "GET", keys, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != own.ID {
		t.Fatalf("the user's SSH keys: %+v", list.Items)
	}
}
