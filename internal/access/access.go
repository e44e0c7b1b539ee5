// Package access is paddock's one identity and access service. Every door
// into the server (the HTTP API, the preview gateway, the SSH gateway)
// turns what a caller presents into a Principal here, and asks the one
// Authorize whether that principal may do what it asks where it asks:
//
//   - credential.go: an API key, a wallet session token, a preview token
//     or an SSH public key becomes a Principal; a credential dies with its
//     holder's membership and does not come back when they rejoin;
//   - authorize.go: Authorize(principal, need, target) over an org, a
//     workspace or a runtime, with roles capped by membership and keys
//     narrowed to a workspace;
//   - path.go: the one way from any door to a runtime's agent: resolve
//     the runtime (by id or short id), authorize, wake, dial;
//   - users.go, members.go, keys.go, invitations.go, sshkeys.go,
//     signin.go: the identity operations, with their rules (the last
//     owner, who makes which key, what an invitation grants).
//
// internal/auth keeps the credentials' forms and crypto: key format and
// hash, wallet sign-in, PASETO session and preview tokens, roles.
package access

import (
	"log/slog"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
)

// Principal is a verified caller: who holds the credential, and what the
// credential is scoped to (auth.Identity).
type Principal = auth.Identity

// DefaultInvitationTTL is how long an invitation stays open unless the
// installation says otherwise.
const DefaultInvitationTTL = 7 * 24 * time.Hour

// Config wires a Service.
type Config struct {
	Store Store
	// SignIn verifies session tokens and opens preview tokens
	// (Authenticate, PreviewToken); nil: the server takes neither.
	// UseSignIn gives what issues them.
	SignIn *auth.SignIn
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DirectAdd lets org admins add existing users at once, without an
	// invitation.
	DirectAdd bool
	// InvitationTTL is how long an invitation stays open; 0 means
	// DefaultInvitationTTL.
	InvitationTTL time.Duration
	// Logger logs what fails on the side; nil discards.
	Logger *slog.Logger
}

// Service decides who a caller is and what it may do, and keeps users,
// members, keys, invitations and SSH keys. It is safe for concurrent use.
type Service struct {
	store         Store
	signin        *auth.SignIn
	clock         func() time.Time
	directAdd     bool
	invitationTTL time.Duration
	logger        *slog.Logger
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, signin: cfg.SignIn, clock: cfg.Now, directAdd: cfg.DirectAdd, invitationTTL: cfg.InvitationTTL}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.logger = cfg.Logger; s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.invitationTTL <= 0 {
		s.invitationTTL = DefaultInvitationTTL
	}
	return s
}

// now is the time records are stamped with.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// keys makes keys in the service's store.
func (s *Service) keys() auth.Keys { return auth.Keys{Store: s.store, Now: s.clock} }
