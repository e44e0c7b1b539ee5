package sshgw

import (
	"context"
	"errors"

	"golang.org/x/crypto/ssh"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/store"
)

// Who may connect. The client's key names its user and its scope
// (iam.Service.SSHKey: a key registered with a session acts with the
// user's memberships; one registered with an API key keeps that key's
// scope and dies with it, or with the user's membership). The SSH user
// name names the runtime: its id, or a prefix of at least 12 of the id's
// hex characters without dashes (as `paddock` shows ids), which must
// match exactly one runtime (iam.Path.Resolve). The user needs the member
// role in the runtime's org and must see its workspace: the one
// Authorize, as for the API and previews.
//
// Every refusal is the same authentication failure to the client, so it
// never learns whether a runtime exists; the log says why, with the
// client's address and the key's fingerprint, never the key.

// errRefused is every refusal the client sees.
var errRefused = errors.New("ssh: permission denied")

// Permissions extensions set on an authenticated connection.
const (
	extKeyID       = "paddock-key-id"
	extFingerprint = "paddock-fingerprint"
	extUserID      = "paddock-user-id"
	extRuntimeID   = "paddock-runtime-id"
)

// grant is what an accepted key may do: open sessions into one runtime.
type grant struct {
	keyID       string
	fingerprint string
	userID      string
	runtimeID   string
}

func (g grant) permissions() *ssh.Permissions {
	return &ssh.Permissions{Extensions: map[string]string{
		extKeyID: g.keyID, extFingerprint: g.fingerprint, extUserID: g.userID, extRuntimeID: g.runtimeID,
	}}
}

func grantOf(p *ssh.Permissions) grant {
	if p == nil {
		return grant{}
	}
	e := p.Extensions
	return grant{keyID: e[extKeyID], fingerprint: e[extFingerprint], userID: e[extUserID], runtimeID: e[extRuntimeID]}
}

// refusal is why a key was refused, for the log: the access service's
// reason (auth.Refusal).
type refusal string

const (
	refusedUnknownKey   refusal = "unknown_key"
	refusedNoRuntime    refusal = "unknown_runtime"
	refusedLookupFailed refusal = "lookup_failed"
)

// authorize decides whether the key with fingerprint and public key pub
// (authorized_keys form) may open sessions into the runtime user names.
// A refusal is a reason and no error; err is a failure to decide.
func (g *Gateway) authorize(ctx context.Context, user, fingerprint, pub string) (grant, refusal, error) {
	p, k, err := g.path.Access.SSHKey(ctx, fingerprint, pub)
	return g.grantFor(ctx, user, p, k, err)
}

// reauthorize decides again whether gr's key, found by its id, still
// grants access to gr's runtime, as authorize does.
func (g *Gateway) reauthorize(ctx context.Context, gr grant) (refusal, error) {
	p, k, err := g.path.Access.SSHKeyByID(ctx, gr.keyID)
	// By the runtime's whole id: a runtime made since that shares the
	// user name's prefix does not make it ambiguous.
	now, why, err := g.grantFor(ctx, gr.runtimeID, p, k, err)
	if why == "" && err == nil && now.runtimeID != gr.runtimeID {
		why = refusedNoRuntime
	}
	return why, err
}

// grantFor decides whether principal p of SSH key k (or the refusal err of
// finding them) may open sessions into the runtime user names.
func (g *Gateway) grantFor(ctx context.Context, user string, p iam.Principal, k store.SSHKey, err error) (grant, refusal, error) {
	if err != nil {
		return refused(err)
	}
	rt, err := g.path.Resolve(ctx, user)
	if err != nil {
		return refused(err)
	}
	if err := g.path.Authorize(ctx, p, iam.Member, rt); err != nil {
		return refused(err)
	}
	return grant{keyID: k.ID, fingerprint: k.Fingerprint, userID: k.UserID, runtimeID: rt.ID}, "", nil
}

// refused reads a failure of the access service: one that carries a
// refusal (iam.RefusalOf) is that refusal, with the reason it names; any
// other, public or not (a store that is busy, full or read-only), is a
// failure to decide.
func refused(err error) (grant, refusal, error) {
	if why := iam.RefusalOf(err); why != "" {
		return grant{}, refusal(why), nil
	}
	return grant{}, refusedLookupFailed, err
}

// RuntimePrefix turns an SSH user name into the runtime id, or id prefix,
// it names (iam.RuntimePrefix).
func RuntimePrefix(user string) (prefix string, ok bool) { return iam.RuntimePrefix(user) }

// UserName is the SSH user name that names runtime id: its short id.
func UserName(runtimeID string) string { return iam.ShortID(runtimeID) }
