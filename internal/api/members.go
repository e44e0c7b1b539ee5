package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// maxMemberLimit bounds a workspace's member limit.
const maxMemberLimit = 1_000_000

func memberOut(m store.WorkspaceMember) client.WorkspaceMember {
	return client.WorkspaceMember{ID: m.ID, WorkspaceID: m.WorkspaceID, UserID: m.UserID, Member: m.User.Handle(), CreatedAt: m.CreatedAt}
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
	// A workspace's members are the org's: the access service says who
	// may join it through this add.
	u, err := a.iam.WorkspaceJoiner(ctx, identity(r), access(r), req.Member)
	if err != nil {
		return err
	}
	m, err := l.AddMember(ctx, ws, u.ID)
	if err != nil {
		return err
	}
	m.User = u
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
	u, err := a.iam.MemberOrNamed(ctx, ws.OrgID, member)
	if errdefs.IsNotFound(err) {
		err = errdefs.NotFound("member_not_found", "%q is not a member of workspace %q", member, ws.Name)
	}
	if err != nil {
		return err
	}
	if err := l.RemoveMember(ctx, ws, u.ID); err != nil {
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
	if req.MemberLimit < 0 || req.MemberLimit > maxMemberLimit {
		return errdefs.InvalidArgument("invalid_member_limit", "member_limit must be between 0 (no limit) and %d", maxMemberLimit)
	}
	seats, err := l.SetMemberLimit(ctx, ws, req.MemberLimit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, seatsOut(seats))
	return nil
}
