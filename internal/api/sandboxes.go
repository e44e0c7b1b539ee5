package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) listSandboxes(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	page, err := pageFrom(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
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
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_filter", "kind must be one of runtime, task, world"))
		return
	}
	switch f.State {
	case "", store.SandboxStarting, store.SandboxRunning, store.SandboxPaused, store.SandboxKilled:
	default:
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_filter", "state must be one of starting, running, paused, killed"))
		return
	}
	if f.RuntimeID != "" && !isUUID(f.RuntimeID) {
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_filter", "runtime_id must be a UUID"))
		return
	}
	if f.Provider != "" && !slugRE.MatchString(f.Provider) {
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_filter", "provider %q is not a provider name", f.Provider))
		return
	}
	sbs, next, err := a.store.ListSandboxes(ctx, f, page)
	if err != nil {
		writeError(ctx, w, a.logger, listError(err))
		return
	}
	out := client.List[client.Sandbox]{Items: make([]client.Sandbox, 0, len(sbs)), NextCursor: next}
	for _, sb := range sbs {
		out.Items = append(out.Items, a.sandboxView(sb))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) getSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := a.sandboxOf(r)
	if err != nil {
		writeError(r.Context(), w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, a.sandboxView(sb))
}

func (a *API) killSandbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sb, err := a.sandboxOf(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if sb, err = a.runtimes.KillSandbox(ctx, sb.ID); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, a.sandboxView(sb))
}
