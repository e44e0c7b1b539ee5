package api

import (
	"net/http"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Users: people and machines, made and managed by the installation admin
// only (the access service's rules, iam users.go).

func userOut(u store.User) client.User {
	return client.User{ID: u.ID, Email: u.Email, Wallet: u.Wallet, Name: u.Name, CreatedAt: u.CreatedAt}
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateUserRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	u, err := a.iam.CreateUser(r.Context(), iam.UserSpec{Email: req.Email, Wallet: req.Wallet, Name: req.Name})
	if err != nil {
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
	us, next, err := a.iam.ListUsers(r.Context(), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(us, next, userOut))
	return nil
}

func (a *API) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := a.iam.UserByHandle(r.Context(), r.PathValue("user"), false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userOut(u))
	return nil
}

func (a *API) updateUser(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateUserRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	u, walletChanged, err := a.iam.UpdateUser(r.Context(), r.PathValue("user"), iam.UserChange{Email: req.Email, Wallet: req.Wallet, Name: req.Name})
	if err != nil {
		return err
	}
	if walletChanged {
		// The store ended the sessions the old wallet opened.
		a.live.endSessions(u.ID)
	}
	writeJSON(w, http.StatusOK, userOut(u))
	return nil
}

func (a *API) deleteUser(w http.ResponseWriter, r *http.Request) error {
	u, err := a.iam.DeleteUser(r.Context(), r.PathValue("user"))
	if err != nil {
		return err
	}
	a.live.endMember("", u.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// me says who the caller is.
func (a *API) me(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	me, err := a.iam.Whoami(r.Context(), id)
	if err != nil {
		return err
	}
	out := client.Me{Credential: id.Credential(), Installation: id.Installation, Memberships: []client.Membership{}}
	if me.User != nil {
		uo := userOut(*me.User)
		out.User = &uo
	}
	if me.Key != nil {
		ko := keyOut(*me.Key)
		out.Key = &ko
	}
	for _, m := range me.Memberships {
		out.Memberships = append(out.Memberships, client.Membership{OrgID: m.Org.ID, Org: m.Org.Name, Role: m.Role})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
