package access

import (
	"context"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Users: people and machines, made and managed by the installation admin
// only. Org admins invite addresses (invitations.go) and never make users.

// emailRE is the shape of an email address: enough to refuse typos, not
// a full RFC 5322 parser.
var emailRE = regexp.MustCompile(`^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`)

const (
	maxEmailLen = 254
	maxNameLen  = 100
)

// normEmail validates an email address and returns its stored form.
func normEmail(s string) (string, error) {
	if len(s) > maxEmailLen || !emailRE.MatchString(s) {
		return "", errdefs.InvalidArgument("invalid_email", "%q is not an email address", s)
	}
	return strings.ToLower(s), nil
}

// normWallet validates a wallet address and returns its stored form.
func normWallet(s string) (string, error) {
	addr, err := wallet.ParseAddress(s)
	if err != nil {
		return "", errdefs.InvalidArgument("invalid_wallet_address", "%v", err)
	}
	return addr.Lower(), nil
}

func validUserName(s string) error {
	if len(s) > maxNameLen || strings.ContainsAny(s, "\x00\r\n") {
		return errdefs.InvalidArgument("invalid_name", "a user's name is at most %d characters on one line", maxNameLen)
	}
	return nil
}

func isWallet(s string) bool { return strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") }

// UserByHandle finds the user a handle names: a user id, an email address
// or a wallet address. With create, an email or wallet no user has yet
// makes one.
func (s *Service) UserByHandle(ctx context.Context, handle string, create bool) (store.User, error) {
	var (
		u   store.User
		err error
		nu  store.User
	)
	switch {
	case store.IsID(handle):
		u, err = s.store.GetUser(ctx, handle)
	case strings.Contains(handle, "@"):
		email, verr := normEmail(handle)
		if verr != nil {
			return u, verr
		}
		u, err = s.store.GetUserByEmail(ctx, email)
		nu = store.User{Email: email}
	case isWallet(handle):
		w, verr := normWallet(handle)
		if verr != nil {
			return u, verr
		}
		u, err = s.store.GetUserByWallet(ctx, w)
		nu = store.User{Wallet: w}
	default:
		return u, errdefs.InvalidArgument("invalid_member", "%q is not a user id, an email address or a wallet address", handle)
	}
	if errdefs.IsNotFound(err) && create && (nu.Email != "" || nu.Wallet != "") {
		nu.ID, nu.CreatedAt = uuid.NewString(), s.now()
		if err = s.store.CreateUser(ctx, nu); errdefs.IsConflict(err) {
			// Made by a concurrent request: take it.
			return s.UserByHandle(ctx, handle, false)
		}
		return nu, err
	}
	if errdefs.IsNotFound(err) {
		return u, errdefs.NotFound("user_not_found", "no user %q", handle)
	}
	return u, err
}

// UserSpec is a user to make: an email or a wallet address, or both, and
// a name.
type UserSpec struct {
	Email, Wallet, Name string
}

// CreateUser makes a user.
func (s *Service) CreateUser(ctx context.Context, spec UserSpec) (store.User, error) {
	u := store.User{ID: uuid.NewString(), Name: spec.Name, CreatedAt: s.now()}
	var err error
	if spec.Email == "" && spec.Wallet == "" {
		return u, errdefs.InvalidArgument("missing_identity", "a user needs an email or a wallet address")
	}
	if spec.Email != "" {
		if u.Email, err = normEmail(spec.Email); err != nil {
			return u, err
		}
	}
	if spec.Wallet != "" {
		if u.Wallet, err = normWallet(spec.Wallet); err != nil {
			return u, err
		}
	}
	if err := validUserName(spec.Name); err != nil {
		return u, err
	}
	return u, s.store.CreateUser(ctx, u)
}

// ListUsers lists a page of the installation's users.
func (s *Service) ListUsers(ctx context.Context, page store.Page) ([]store.User, string, error) {
	return s.store.ListUsers(ctx, page)
}

// UserChange is what an update changes: a nil field stays, "" clears.
type UserChange struct {
	Email, Wallet, Name *string
}

// UpdateUser changes the user handle names. A new wallet address ends the
// sessions the old one opened (walletChanged says so, for the door to end
// their open streams).
func (s *Service) UpdateUser(ctx context.Context, handle string, c UserChange) (u store.User, walletChanged bool, err error) {
	u, err = s.UserByHandle(ctx, handle, false)
	if err != nil {
		return u, false, err
	}
	if u, err = applyUserChange(u, c); err != nil {
		return u, false, err
	}
	before, err := s.store.GetUser(ctx, u.ID)
	if err != nil {
		return u, false, err
	}
	if err := s.store.UpdateUser(ctx, u); err != nil {
		return u, false, err
	}
	return u, before.Wallet != u.Wallet, nil
}

// applyUserChange validates c and applies it to u.
func applyUserChange(u store.User, c UserChange) (store.User, error) {
	var err error
	if c.Email != nil {
		u.Email = ""
		if *c.Email != "" {
			if u.Email, err = normEmail(*c.Email); err != nil {
				return u, err
			}
		}
	}
	if c.Wallet != nil {
		u.Wallet = ""
		if *c.Wallet != "" {
			if u.Wallet, err = normWallet(*c.Wallet); err != nil {
				return u, err
			}
		}
	}
	if c.Name != nil {
		if err := validUserName(*c.Name); err != nil {
			return u, err
		}
		u.Name = *c.Name
	}
	if u.Email == "" && u.Wallet == "" && u.Name == "" {
		return u, errdefs.InvalidArgument("missing_identity", "a user keeps an email, a wallet address or a name")
	}
	return u, nil
}

// DeleteUser deletes the user handle names, with their memberships, keys
// and sessions.
func (s *Service) DeleteUser(ctx context.Context, handle string) (store.User, error) {
	u, err := s.UserByHandle(ctx, handle, false)
	if err != nil {
		return u, err
	}
	return u, s.store.DeleteUser(ctx, u.ID)
}

// Me is who a principal is: its user, its key (its role as lowered to
// its holder's), and its memberships.
type Me struct {
	User        *store.User
	Key         *store.APIKey
	Memberships []Membership
}

// Membership is a role in an org.
type Membership struct {
	Org  store.Org
	Role string
}

// Whoami says who p is.
func (s *Service) Whoami(ctx context.Context, p Principal) (Me, error) {
	var me Me
	if p.UserID != "" {
		u, err := s.store.GetUser(ctx, p.UserID)
		if err != nil {
			return me, err
		}
		me.User = &u
	}
	if p.KeyID != "" {
		k, err := s.store.GetAPIKey(ctx, p.KeyID)
		if err != nil {
			return me, err
		}
		k.Role = string(p.Role) // as lowered to the holder's
		me.Key = &k
	}
	var ms []store.OrgMember
	switch {
	case p.OrgID != "":
		ms = []store.OrgMember{{OrgID: p.OrgID, Role: string(p.Role)}}
	case p.UserID != "":
		var err error
		if ms, err = s.store.ListUserOrgs(ctx, p.UserID); err != nil {
			return me, err
		}
	}
	for _, m := range ms {
		o, err := s.store.GetOrg(ctx, m.OrgID)
		if err != nil {
			return me, err
		}
		me.Memberships = append(me.Memberships, Membership{Org: o, Role: m.Role})
	}
	return me, nil
}
