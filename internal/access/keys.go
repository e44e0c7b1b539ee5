package access

import (
	"context"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// API keys. A key belongs to a user and is scoped to an org, optionally
// narrowed to one workspace, with a role no higher than its holder's, nor
// than its maker's. Members make keys for themselves; admins for any
// member. The key is shown once; listings show its prefix.

const (
	// MaxKeyNameLen bounds a key's name, an SSH key's too.
	MaxKeyNameLen = 100
	// maxKeyLifetime bounds how far ahead a key may expire.
	maxKeyLifetime = 10 * 365 * 24 * time.Hour
	// maxKeyChain bounds how many keys back OwnUser looks for who made a
	// key.
	maxKeyChain = 16
)

// OwnUser reports whether p speaks as its user, for what is a user's own
// across orgs (invitations, SSH keys, named by what): 400 no_user for a
// credential without one, as the installation admin's. A key with no org
// has none either: an SSH key registered with it would have no scope, as a
// session's. own is false for a key that speaks for its user in its org
// only: one someone else made for them (an admin, or an org key with no
// user, made before there were users), or one made with such a key.
func (s *Service) OwnUser(ctx context.Context, p Principal, what string) (own bool, err error) {
	if p.UserID == "" || (p.SessionID == "" && p.OrgID == "") {
		return false, errdefs.InvalidArgument("no_user", "%s belong to a user, and this credential has none: use a member's key or sign in", what)
	}
	if p.SessionID != "" {
		return true, nil
	}
	if p.MakerUserID != "" {
		return false, nil
	}
	// Back through what made the key: the user's own keys, up to a
	// session (the user's: another's would have made them the maker),
	// the installation admin or the server.
	keyID := p.KeyID
	for range maxKeyChain {
		k, err := s.store.GetAPIKey(ctx, keyID)
		switch {
		case errdefs.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		case k.OrgID == "":
			return true, nil
		case k.MakerUserID != "" || k.UserID != p.UserID:
			return false, nil
		}
		kind, made, _ := strings.Cut(k.CreatedBy, ":")
		if kind != "key" {
			return true, nil
		}
		keyID = made
	}
	return false, nil
}

// expiry reads when a key asked for expires: zero for never.
func (s *Service) expiry(at *time.Time, in string) (time.Time, error) {
	now := s.now()
	var t time.Time
	switch {
	case at != nil && in != "":
		return t, errdefs.InvalidArgument("invalid_expiry", "give expires_at or expires_in, not both")
	case at != nil:
		t = at.UTC()
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return t, errdefs.InvalidArgument("invalid_expiry", "expires_in %q must be a positive duration such as 720h", in)
		}
		t = now.Add(d)
	default:
		return t, nil
	}
	if !t.After(now) || t.Sub(now) > maxKeyLifetime {
		return t, errdefs.InvalidArgument("invalid_expiry", "a key expires in the future, within ten years")
	}
	return t.Truncate(time.Microsecond), nil
}

// KeySpec is a key asked for: its name, its holder (a member's handle;
// "" for the caller), its role ("" for the most it may have), the
// workspace it is narrowed to ("" for none), and when it expires
// (ExpiresAt or ExpiresIn, or neither for never).
type KeySpec struct {
	Name, Member, Role, Workspace string
	ExpiresAt                     *time.Time
	ExpiresIn                     string
}

func validKeyName(name string) error {
	if len(name) > MaxKeyNameLen {
		return errdefs.InvalidArgument("invalid_name", "a key's name is at most %d characters", MaxKeyNameLen)
	}
	return nil
}

// CreateKey makes a key of the org acc is of, by p, and returns its
// plaintext, shown once.
func (s *Service) CreateKey(ctx context.Context, p Principal, acc auth.Access, spec KeySpec) (string, store.APIKey, error) {
	if err := validKeyName(spec.Name); err != nil {
		return "", store.APIKey{}, err
	}
	expires, err := s.expiry(spec.ExpiresAt, spec.ExpiresIn)
	if err != nil {
		return "", store.APIKey{}, err
	}
	m, err := s.keyHolder(ctx, p, acc, spec.Member)
	if err != nil {
		return "", store.APIKey{}, err
	}
	role := auth.MinRole(auth.Role(m.Role), acc.Role)
	if spec.Role != "" {
		asked, err := auth.ParseRole(spec.Role)
		if err != nil {
			return "", store.APIKey{}, err
		}
		if !role.AtLeast(asked) {
			return "", store.APIKey{}, errdefs.PermissionDenied("role_too_high", "a key's role is at most its holder's (%s) and its maker's (%s)", m.Role, acc.Role)
		}
		role = asked
	}
	rec := store.APIKey{Name: spec.Name, Role: string(role), OrgID: acc.Org.ID, UserID: m.UserID, CreatedBy: p.Credential(), ExpiresAt: expires}
	// Made with a key someone else made for the holder, it is as much
	// theirs as that key.
	rec.MakerUserID = p.MakerUserID
	if p.UserID != "" && p.UserID != m.UserID {
		rec.MakerUserID = p.UserID
	}
	if spec.Workspace != "" {
		if rec.WorkspaceID, err = s.keyWorkspace(ctx, acc, m.UserID, role, spec.Workspace); err != nil {
			return "", store.APIKey{}, err
		}
	}
	return s.keys().Create(ctx, rec, "")
}

// keyHolder is the membership of a key's holder: p's own, or, for an
// admin, the member handle names. Below admin every other name is refused
// alike, so it tells nothing about who exists.
func (s *Service) keyHolder(ctx context.Context, p Principal, acc auth.Access, handle string) (store.OrgMember, error) {
	holderID := p.UserID
	if handle != "" {
		u, err := s.MemberOrNamed(ctx, acc.Org.ID, handle)
		switch {
		case !acc.Role.AtLeast(auth.RoleAdmin) && (err != nil || u.ID != p.UserID):
			return store.OrgMember{}, errdefs.PermissionDenied("role_too_low", "making a key for another member needs the admin role")
		case err != nil:
			return store.OrgMember{}, err
		}
		holderID = u.ID
	}
	if holderID == "" {
		return store.OrgMember{}, errdefs.InvalidArgument("member_required", "name the member the key is for: this credential has no user of its own")
	}
	m, err := s.store.GetOrgMember(ctx, acc.Org.ID, holderID)
	if errdefs.IsNotFound(err) {
		return m, ErrMemberNotFound(handle, acc.Org.Name)
	}
	return m, err
}

// keyWorkspace is the id of the workspace name a key is narrowed to: one
// its maker sees, and, below admin, one its holder is a member of.
func (s *Service) keyWorkspace(ctx context.Context, acc auth.Access, holderID string, role auth.Role, name string) (string, error) {
	if !tenancy.NameRE.MatchString(name) {
		return "", errdefs.InvalidArgument("invalid_workspace", "%q is not a workspace name", name)
	}
	ws, err := s.store.GetWorkspaceByName(ctx, acc.Org.ID, name)
	if err == nil && !acc.SeesWorkspace(ws.ID) {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return "", errdefs.NotFound("workspace_not_found", "workspace %q not found in org %q", name, acc.Org.Name)
	}
	if err != nil {
		return "", err
	}
	if !role.AtLeast(auth.RoleAdmin) {
		in, err := s.store.IsWorkspaceMember(ctx, ws.ID, holderID)
		if err != nil {
			return "", err
		}
		if !in {
			return "", errdefs.InvalidArgument("not_a_workspace_member", "the holder is not a member of workspace %q, so the key would see nothing", ws.Name)
		}
	}
	return ws.ID, nil
}

// ListKeys lists a page of the keys of the org acc is of that p sees: all
// of them for an admin, its own below.
func (s *Service) ListKeys(ctx context.Context, p Principal, acc auth.Access, page store.Page) ([]store.APIKey, string, error) {
	f := store.APIKeyFilter{OrgID: acc.Org.ID}
	if !acc.Role.AtLeast(auth.RoleAdmin) {
		if p.UserID == "" {
			k, err := s.store.GetAPIKey(ctx, p.KeyID)
			if err != nil {
				return nil, "", err
			}
			return []store.APIKey{k}, "", nil
		}
		f.UserID = p.UserID
	}
	return s.store.ListAPIKeys(ctx, f, page)
}

// RevokeKey revokes key id of the org acc is of, for p: one's own, or any
// for an admin. A key p may not see is not found. Revoking takes effect
// on the key's next use; revoking again changes nothing.
func (s *Service) RevokeKey(ctx context.Context, p Principal, acc auth.Access, id string) error {
	if !store.IsID(id) {
		return errdefs.InvalidArgument("invalid_key_id", "%q is not a key id (a UUID)", id)
	}
	k, err := s.store.GetAPIKey(ctx, id)
	if err == nil && (k.OrgID != acc.Org.ID || (!acc.Role.AtLeast(auth.RoleAdmin) && (k.UserID == "" || k.UserID != p.UserID) && k.ID != p.KeyID)) {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return errdefs.NotFound("key_not_found", "key %s not found", id)
	}
	if err != nil {
		return err
	}
	_, err = s.store.RevokeAPIKey(ctx, k.ID, s.now())
	return err
}

// ListInstallationKeys lists a page of the installation-wide keys.
func (s *Service) ListInstallationKeys(ctx context.Context, page store.Page) ([]store.APIKey, string, error) {
	return s.store.ListAPIKeys(ctx, store.APIKeyFilter{Installation: true}, page)
}

// CreateInstallationKey makes an installation-wide key, by p.
func (s *Service) CreateInstallationKey(ctx context.Context, p Principal, name string) (string, store.APIKey, error) {
	if err := validKeyName(name); err != nil {
		return "", store.APIKey{}, err
	}
	return s.keys().Create(ctx, store.APIKey{Name: name, Role: string(auth.RoleAdmin), CreatedBy: p.Credential()}, "")
}

// RevokeInstallationKey revokes any key of the installation.
func (s *Service) RevokeInstallationKey(ctx context.Context, id string) error {
	if !store.IsID(id) {
		return errdefs.InvalidArgument("invalid_key_id", "%q is not a key id (a UUID)", id)
	}
	if _, err := s.store.RevokeAPIKey(ctx, id, s.now()); err != nil {
		if errdefs.IsNotFound(err) {
			return errdefs.NotFound("key_not_found", "key %s not found", id)
		}
		return err
	}
	return nil
}

// FirstKey makes the installation's first admin key when it has none:
// configured, when given, is its plain text, else it is random. made is
// false, and nothing is made, when a key exists.
func (s *Service) FirstKey(ctx context.Context, configured string) (plain string, made bool, err error) {
	n, err := s.store.CountAPIKeys(ctx)
	if err != nil || n > 0 {
		return "", false, err
	}
	plain, _, err = s.keys().Create(ctx, store.APIKey{Name: "bootstrap admin", Role: string(auth.RoleAdmin)}, configured)
	return plain, err == nil, err
}
