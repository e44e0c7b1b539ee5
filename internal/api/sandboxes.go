package api

import (
	"context"
	"github.com/paddockhq/paddock/pkg/client"
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func (a *API) listSandboxes(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.SandboxFilter{
		OrgID:     o.ID,
		Kind:      store.SandboxKind(q.Get("kind")),
		State:     store.SandboxState(q.Get("state")),
		Provider:  q.Get("provider"),
		RuntimeID: q.Get("runtime_id"),
	}
	switch f.Kind {
	case "", store.KindRuntime, store.KindTask, store.KindWorld:
	default:
		return errdefs.InvalidArgument("invalid_filter", "kind must be one of runtime, task, world")
	}
	switch f.State {
	case "", store.SandboxStarting, store.SandboxRunning, store.SandboxPaused, store.SandboxKilled:
	default:
		return errdefs.InvalidArgument("invalid_filter", "state must be one of starting, running, paused, killed")
	}
	if f.RuntimeID != "" && !isUUID(f.RuntimeID) {
		return errdefs.InvalidArgument("invalid_filter", "runtime_id must be a UUID")
	}
	if f.Provider != "" && !slugRE.MatchString(f.Provider) {
		return errdefs.InvalidArgument("invalid_filter", "provider %q is not a provider name", f.Provider)
	}
	sbs, next, err := a.store.ListSandboxes(ctx, f, page)
	if err != nil {
		return listError(err)
	}
	n := a.names()
	writeJSON(w, http.StatusOK, listOf(sbs, next, func(sb store.Sandbox) client.Sandbox { return a.namedSandbox(ctx, n, sb) }))
	return nil
}

// namedSandbox is sandboxView with its project's name.
func (a *API) namedSandbox(ctx context.Context, n *names, sb store.Sandbox) client.Sandbox {
	out := a.sandboxView(sb)
	out.ProjectName = n.project(ctx, sb.ProjectID)
	return out
}

func (a *API) getSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := a.sandboxOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.namedSandbox(r.Context(), a.names(), sb))
	return nil
}

func (a *API) killSandbox(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sb, err := a.sandboxOf(r)
	if err != nil {
		return err
	}
	if sb, err = a.runtimes.KillSandbox(ctx, sb.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.namedSandbox(ctx, a.names(), sb))
	return nil
}
