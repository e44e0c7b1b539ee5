package api

import (
	"net/http"
	"regexp"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// memberRE is the shape of a member handle: an email address or a name.
var memberRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,253}$`)

// maxMemberLimit bounds a workspace's member limit.
const maxMemberLimit = 1_000_000

func validMember(m string) error {
	if !memberRE.MatchString(m) {
		return errdefs.InvalidArgument("invalid_member", "member %q must be an email address or a name: 1 to 254 letters, digits and . _ @ + -, starting with a letter or digit", m)
	}
	return nil
}

func memberOut(m store.WorkspaceMember) client.WorkspaceMember {
	return client.WorkspaceMember{ID: m.ID, WorkspaceID: m.WorkspaceID, Member: m.Member, CreatedAt: m.CreatedAt}
}

func seatsOut(s store.WorkspaceSeats) client.MemberLimit {
	return client.MemberLimit{WorkspaceID: s.WorkspaceID, MemberLimit: s.MemberLimit, Members: s.Members, OverLimit: s.OverLimit()}
}

func (a *API) listMembers(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, ws, err := a.creditsWorkspace(r)
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ms, next, err := l.Members(ctx, ws, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ms, next, memberOut))
	return nil
}

func (a *API) addMember(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, ws, err := a.creditsWorkspace(r)
	if err != nil {
		return err
	}
	var req client.AddMemberRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := validMember(req.Member); err != nil {
		return err
	}
	m, err := l.AddMember(ctx, ws, req.Member)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, memberOut(m))
	return nil
}

func (a *API) removeMember(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, ws, err := a.creditsWorkspace(r)
	if err != nil {
		return err
	}
	member := r.PathValue("member")
	if err := validMember(member); err != nil {
		return err
	}
	if err := l.RemoveMember(ctx, ws, member); err != nil {
		if errdefs.IsNotFound(err) {
			err = errdefs.NotFound("member_not_found", "%q is not a member of workspace %q", member, ws.Name)
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) getMemberLimit(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, ws, err := a.creditsWorkspace(r)
	if err != nil {
		return err
	}
	seats, err := l.Seats(ctx, ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, seatsOut(seats))
	return nil
}

func (a *API) setMemberLimit(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, ws, err := a.creditsWorkspace(r)
	if err != nil {
		return err
	}
	var req client.SetMemberLimitRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	switch {
	case !identity(r).IsInstallationAdmin():
		err = errdefs.PermissionDenied("admin_only", "only an installation admin key can set a member limit")
	case req.MemberLimit < 0 || req.MemberLimit > maxMemberLimit:
		err = errdefs.InvalidArgument("invalid_member_limit", "member_limit must be between 0 (no limit) and %d", maxMemberLimit)
	}
	if err != nil {
		return err
	}
	seats, err := l.SetMemberLimit(ctx, ws, req.MemberLimit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, seatsOut(seats))
	return nil
}
