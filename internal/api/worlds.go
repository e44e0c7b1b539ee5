package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/world"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createWorld(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	var body client.CreateWorldRequest
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	req := world.Request{Name: body.Name, Members: make([]world.MemberRequest, 0, len(body.Members))}
	for _, m := range body.Members {
		cfg, err := configIn(m.Runtime)
		if err != nil {
			return err
		}
		if len(m.Env) > 0 {
			cfg.Env = m.Env
		}
		req.Members = append(req.Members, world.MemberRequest{Name: m.Name, Template: m.Template, Config: cfg, Command: m.Command})
	}
	out, err := a.worlds.Create(ctx, ws, req)
	if err != nil {
		return err
	}
	view, err := a.worldView(r, out)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, view)
	return nil
}

func (a *API) listWorlds(w http.ResponseWriter, r *http.Request) error {
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	worlds, next, err := a.worlds.List(r.Context(), ws, page)
	if err != nil {
		return listError(err)
	}
	out := client.WorldList{Items: make([]client.World, 0, len(worlds)), NextCursor: next}
	for _, x := range worlds {
		v, err := a.worldView(r, x)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// worldOf resolves {world_id} in {org}/{workspace}.
func (a *API) worldOf(r *http.Request) (store.Workspace, string, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return ws, "", err
	}
	id := r.PathValue("world_id")
	if !isUUID(id) {
		return ws, "", errdefs.NotFound(world.CodeNotFound, "world %s not found", id)
	}
	return ws, id, nil
}

// worldAction answers what act does to the world of the request.
func (a *API) worldAction(act func(*http.Request, store.Workspace, string) (world.World, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ws, id, err := a.worldOf(r)
		if err != nil {
			return err
		}
		out, err := act(r, ws, id)
		if err != nil {
			return err
		}
		view, err := a.worldView(r, out)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, view)
		return nil
	}
}

func (a *API) getWorld(r *http.Request, ws store.Workspace, id string) (world.World, error) {
	return a.worlds.Get(r.Context(), ws, id)
}

func (a *API) deleteWorld(r *http.Request, ws store.Workspace, id string) (world.World, error) {
	return a.worlds.Delete(r.Context(), ws, id)
}

func (a *API) pauseWorld(r *http.Request, ws store.Workspace, id string) (world.World, error) {
	return a.worlds.Pause(r.Context(), ws, id)
}

func (a *API) resumeWorld(r *http.Request, ws store.Workspace, id string) (world.World, error) {
	return a.worlds.Resume(r.Context(), ws, id)
}

// execWorldMember runs a collected exec in a member of a running world,
// through its agent, as a runtime's exec does.
func (a *API) execWorldMember(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := a.worldOf(r)
	if err != nil {
		return err
	}
	var body client.ExecRequest
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	req, err := execRequest(body, false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	c, sb, err := a.worlds.Agent(ctx, ws, id, r.PathValue("member_name"))
	if err != nil {
		return err
	}
	if !req.Background {
		release, err := a.execCaps.acquire(ctx, sb.ID, identity(r).Principal())
		if err != nil {
			return err
		}
		defer release()
		var end func()
		ctx, end = a.live.open(ctx, identity(r), access(r).Org.ID)
		defer end()
	}
	es, err := c.Exec(ctx, req)
	if err != nil {
		return a.cutOr(ctx, r, err)
	}
	return a.cutOr(ctx, r, collect(w, es, req.Background, body.MaxOutputBytes))
}

// worldView renders a world with its members' ledger rows and its cost.
func (a *API) worldView(r *http.Request, x world.World) (client.World, error) {
	rows, err := a.worlds.Members(r.Context(), x)
	if err != nil {
		return client.World{}, err
	}
	byID := map[string]client.Sandbox{}
	out := client.World{ID: x.ID, OrgID: x.OrgID, WorkspaceID: x.WorkspaceID, Name: x.Name, Status: x.Status,
		Provider: x.Spec.Provider, Error: x.Spec.Error, Members: make([]client.WorldMember, 0, len(x.Spec.Members)),
		CreatedAt: x.CreatedAt.UTC()}
	for _, sb := range rows {
		v := a.sandboxView(sb)
		byID[sb.ID] = v
		out.BilledCredits += v.BilledCredits
		out.EstimatedTotalCredits += v.EstimatedTotalCredits
	}
	for _, m := range x.Spec.Members {
		mv := client.WorldMember{Name: m.Name, Template: m.Template, Image: m.Config.Image, Command: m.Command, SandboxID: m.SandboxID}
		if v, ok := byID[m.SandboxID]; ok {
			mv.Sandbox = &v
		}
		out.Members = append(out.Members, mv)
	}
	return out, nil
}
