package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Snapshots are snapshots of runtimes taken on request: taken, listed,
// restored into a runtime or a new project, and deleted.
func Snapshots(s *snapshot.Service) Feature {
	return Feature{Name: "snapshots", use: func(a *API) { a.snapshots = s }, routes: func(a *API) []Route {
		return []Route{
			route("POST", rtPrefix+"/snapshots", member, a.createSnapshot),
			route("GET", rtPrefix+"/snapshots", viewer, a.listRuntimeSnapshots),
			route("GET", wsPrefix+"/snapshots", viewer, a.listSnapshots),
			route("GET", wsPrefix+"/snapshots/{snapshot_id}", viewer, a.getSnapshot),
			route("DELETE", wsPrefix+"/snapshots/{snapshot_id}", member, a.deleteSnapshot),
			route("POST", wsPrefix+"/snapshots/{snapshot_id}/restore", admin, a.restoreSnapshot),
		}
	}}
}

// snapshotOut renders a snapshot.
func snapshotOut(s store.Snapshot) client.Snapshot {
	return client.Snapshot{
		ID: s.ID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Name: s.Name, Provider: s.Provider,
		Image: s.Image, Config: configOut(s.Config), Destination: s.Destination, SizeBytes: s.SizeBytes, CreatedAt: s.CreatedAt,
	}
}

func (a *API) createSnapshot(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	var req client.CreateSnapshotRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	s, err := a.snapshots.Create(r.Context(), rt, req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, snapshotOut(s))
	return nil
}

func (a *API) listRuntimeSnapshots(w http.ResponseWriter, r *http.Request) error {
	rt, page, err := a.runtimePage(r)
	if err != nil {
		return err
	}
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	ss, next, err := a.snapshots.List(r.Context(), ws, rt.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ss, next, snapshotOut))
	return nil
}

func (a *API) listSnapshots(w http.ResponseWriter, r *http.Request) error {
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	ss, next, err := a.snapshots.List(r.Context(), ws, "", page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ss, next, snapshotOut))
	return nil
}

// snapshotOf resolves {snapshot_id} inside {org}/{workspace}: another
// workspace's is 404, as a missing one.
func (a *API) snapshotOf(r *http.Request) (store.Workspace, store.Snapshot, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return ws, store.Snapshot{}, err
	}
	id := r.PathValue("snapshot_id")
	if !isUUID(id) {
		return ws, store.Snapshot{}, errdefs.NotFound(snapshot.CodeNotFound, "no snapshot %s in this workspace", id)
	}
	s, err := a.snapshots.Get(r.Context(), ws, id)
	return ws, s, err
}

func (a *API) getSnapshot(w http.ResponseWriter, r *http.Request) error {
	_, s, err := a.snapshotOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, snapshotOut(s))
	return nil
}

func (a *API) deleteSnapshot(w http.ResponseWriter, r *http.Request) error {
	_, s, err := a.snapshotOf(r)
	if err != nil {
		return err
	}
	if err := a.snapshots.Delete(r.Context(), s); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) restoreSnapshot(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	ws, s, err := a.snapshotOf(r)
	if err != nil {
		return err
	}
	var req client.RestoreSnapshotRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if (req.RuntimeID == "") == (req.ProjectName == "") || (req.RuntimeID != "" && req.Provider != "") {
		return errdefs.InvalidArgument("invalid_restore_target", "name exactly one target: runtime_id, or project_name (with provider, optionally)")
	}
	var out client.RestoreSnapshotResult
	var rt store.Runtime
	if req.RuntimeID != "" {
		if rt, err = a.path.InWorkspace(ctx, ws.ID, req.RuntimeID); err != nil {
			return err
		}
		if rt, err = a.snapshots.RestoreInto(ctx, rt, s); err != nil {
			return err
		}
	} else {
		p, prt, err := a.snapshots.RestoreAsProject(ctx, ws, s, req.ProjectName, req.Provider)
		if err != nil {
			return err
		}
		po := projectOut(p, prt.ID)
		out.Project, rt = &po, prt
	}
	if out.Runtime, err = a.runtimeView(ctx, rt); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
