package api

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
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

func userOut(u store.User) client.User {
	return client.User{ID: u.ID, Email: u.Email, Wallet: u.Wallet, Name: u.Name, CreatedAt: u.CreatedAt}
}

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

// userByHandle finds the user a handle names: a user id, an email address
// or a wallet address. With create, an email or wallet no user has yet
// makes one.
func (a *API) userByHandle(ctx context.Context, handle string, create bool) (store.User, error) {
	var (
		u   store.User
		err error
		nu  store.User
	)
	switch {
	case isUUID(handle):
		u, err = a.store.GetUser(ctx, handle)
	case strings.Contains(handle, "@"):
		email, verr := normEmail(handle)
		if verr != nil {
			return u, verr
		}
		u, err = a.store.GetUserByEmail(ctx, email)
		nu = store.User{Email: email}
	case strings.HasPrefix(handle, "0x") || strings.HasPrefix(handle, "0X"):
		w, verr := normWallet(handle)
		if verr != nil {
			return u, verr
		}
		u, err = a.store.GetUserByWallet(ctx, w)
		nu = store.User{Wallet: w}
	default:
		return u, errdefs.InvalidArgument("invalid_member", "%q is not a user id, an email address or a wallet address", handle)
	}
	if errdefs.IsNotFound(err) && create && (nu.Email != "" || nu.Wallet != "") {
		nu.ID, nu.CreatedAt = uuid.NewString(), a.now()
		if err = a.store.CreateUser(ctx, nu); errdefs.IsConflict(err) {
			// Made by a concurrent request: take it.
			return a.userByHandle(ctx, handle, false)
		}
		return nu, err
	}
	if errdefs.IsNotFound(err) {
		return u, errdefs.NotFound("user_not_found", "no user %q", handle)
	}
	return u, err
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateUserRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	u := store.User{ID: uuid.NewString(), Name: req.Name, CreatedAt: a.now()}
	var err error
	if req.Email == "" && req.Wallet == "" {
		return errdefs.InvalidArgument("missing_identity", "a user needs an email or a wallet address")
	}
	if req.Email != "" {
		if u.Email, err = normEmail(req.Email); err != nil {
			return err
		}
	}
	if req.Wallet != "" {
		if u.Wallet, err = normWallet(req.Wallet); err != nil {
			return err
		}
	}
	if err := validUserName(req.Name); err != nil {
		return err
	}
	if err := a.store.CreateUser(r.Context(), u); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, userOut(u))
	return nil
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	us, next, err := a.store.ListUsers(r.Context(), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(us, next, userOut))
	return nil
}

func (a *API) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := a.userByHandle(r.Context(), r.PathValue("user"), false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userOut(u))
	return nil
}

func (a *API) updateUser(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req client.UpdateUserRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	u, err := a.userByHandle(ctx, r.PathValue("user"), false)
	if err != nil {
		return err
	}
	if req.Email != nil {
		u.Email = ""
		if *req.Email != "" {
			if u.Email, err = normEmail(*req.Email); err != nil {
				return err
			}
		}
	}
	if req.Wallet != nil {
		u.Wallet = ""
		if *req.Wallet != "" {
			if u.Wallet, err = normWallet(*req.Wallet); err != nil {
				return err
			}
		}
	}
	if req.Name != nil {
		if err := validUserName(*req.Name); err != nil {
			return err
		}
		u.Name = *req.Name
	}
	if u.Email == "" && u.Wallet == "" && u.Name == "" {
		return errdefs.InvalidArgument("missing_identity", "a user keeps an email, a wallet address or a name")
	}
	before, err := a.store.GetUser(ctx, u.ID)
	if err != nil {
		return err
	}
	if err := a.store.UpdateUser(ctx, u); err != nil {
		return err
	}
	if before.Wallet != u.Wallet {
		// The store ended the sessions the old wallet opened.
		a.live.endSessions(u.ID)
	}
	writeJSON(w, http.StatusOK, userOut(u))
	return nil
}

func (a *API) deleteUser(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	u, err := a.userByHandle(ctx, r.PathValue("user"), false)
	if err != nil {
		return err
	}
	if err := a.store.DeleteUser(ctx, u.ID); err != nil {
		return err
	}
	a.live.endMember("", u.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// me says who the caller is.
func (a *API) me(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := identity(r)
	out := client.Me{Credential: id.Credential(), Installation: id.Installation, Memberships: []client.Membership{}}
	if id.UserID != "" {
		u, err := a.store.GetUser(ctx, id.UserID)
		if err != nil {
			return err
		}
		uo := userOut(u)
		out.User = &uo
	}
	if id.KeyID != "" {
		k, err := a.store.GetAPIKey(ctx, id.KeyID)
		if err != nil {
			return err
		}
		ko := keyOut(k)
		ko.Role = string(id.Role) // as lowered to the holder's
		out.Key = &ko
	}
	var ms []store.OrgMember
	switch {
	case id.OrgID != "":
		ms = []store.OrgMember{{OrgID: id.OrgID, Role: string(id.Role)}}
	case id.UserID != "":
		var err error
		if ms, err = a.store.ListUserOrgs(ctx, id.UserID); err != nil {
			return err
		}
	}
	for _, m := range ms {
		o, err := a.store.GetOrg(ctx, m.OrgID)
		if err != nil {
			return err
		}
		out.Memberships = append(out.Memberships, client.Membership{OrgID: o.ID, Org: o.Name, Role: m.Role})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
