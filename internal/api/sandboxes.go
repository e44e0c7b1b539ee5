package api

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/pkg/client"
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
		// A caller kept to some workspaces sees their rows only.
		Workspaces: access(r).Workspaces,
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
	sbs, next, err := a.runtimes.Sandboxes(ctx, f, page)
	if err != nil {
		return listError(err)
	}
	n := a.tenancy.Names()
	writeJSON(w, http.StatusOK, listOf(sbs, next, func(sb store.Sandbox) client.Sandbox { return a.namedSandbox(ctx, n, sb) }))
	return nil
}

// namedSandbox is sandboxView with its project's name.
func (a *API) namedSandbox(ctx context.Context, n *tenancy.Names, sb store.Sandbox) client.Sandbox {
	out := a.sandboxView(sb)
	out.ProjectName = n.Project(ctx, sb.ProjectID)
	return out
}

func (a *API) getSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := a.sandboxOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.namedSandbox(r.Context(), a.tenancy.Names(), sb))
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
	writeJSON(w, http.StatusOK, a.namedSandbox(ctx, a.tenancy.Names(), sb))
	return nil
}

// sandboxLogs answers a sandbox's lifecycle and its agent's own log.
// ?tail=N bounds the agent log's lines (default 200, at most 10000).
func (a *API) sandboxLogs(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sb, err := a.sandboxOf(r)
	if err != nil {
		return err
	}
	tail := 200
	if v := r.URL.Query().Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return errdefs.InvalidArgument("invalid_tail", "tail must be a number of lines between 1 and 10000")
		}
		tail = n
	}
	out := client.SandboxLogs{SandboxID: sb.ID, ProviderSandboxID: sb.ProviderSandboxID, Lifecycle: ledgerEvents(sb)}
	for _, e := range a.logs.Of(sb.ID) {
		attrs := maps.Clone(e.Attrs)
		delete(attrs, logs.KeySandbox)
		out.Lifecycle = append(out.Lifecycle, client.LogEntry{Time: e.Time.UTC(), Level: e.Level, Message: e.Message, Attrs: attrs})
	}
	slices.SortStableFunc(out.Lifecycle, func(x, y client.LogEntry) int { return x.Time.Compare(y.Time) })
	if out.Agent, err = a.runtimes.AgentLog(ctx, sb, tail); err != nil {
		out.AgentError = err.Error()
		if pe, ok := errdefs.Public(err); ok {
			out.AgentError = pe.Code + ": " + pe.Message
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ledgerEvents are the lifecycle steps a ledger row records, which outlive
// a restart.
func ledgerEvents(sb store.Sandbox) []client.LogEntry {
	var out []client.LogEntry
	add := func(t time.Time, level, msg string, attrs map[string]string) {
		if !t.IsZero() {
			out = append(out, client.LogEntry{Time: t.UTC(), Level: level, Message: msg, Attrs: attrs})
		}
	}
	add(sb.CreatedAt, "INFO", "sandbox created", map[string]string{"provider": sb.Provider, "image": sb.Image})
	add(sb.StartedAt, "INFO", "sandbox first running", nil)
	if sb.RunningSince.After(sb.StartedAt) {
		add(sb.RunningSince, "INFO", "sandbox running again", nil)
	}
	if sb.State == store.SandboxPaused {
		add(sb.PausedAt, "INFO", "sandbox paused", map[string]string{"pause_reason": string(sb.PauseReason)})
	}
	if sb.State == store.SandboxKilled {
		attrs := map[string]string{"kill_reason": sb.KillReason}
		if sb.Error != "" {
			attrs["error"] = sb.Error
		}
		add(sb.KilledAt, "INFO", "sandbox killed", attrs)
	}
	return out
}
