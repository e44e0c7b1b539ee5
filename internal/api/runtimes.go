package api

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// maxSecretIDs bounds start's secret_ids.
const maxSecretIDs = 64

// writeRuntime renders rt with its current sandbox.
func (a *API) writeRuntime(ctx context.Context, w http.ResponseWriter, rt store.Runtime) error {
	out, err := a.runtimeView(ctx, rt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) runtimeView(ctx context.Context, rt store.Runtime) (client.Runtime, error) {
	out, err := a.runtimeWithSandbox(ctx, rt)
	out.ProjectName = a.tenancy.Names().Project(ctx, rt.ProjectID)
	return out, err
}

func (a *API) runtimeWithSandbox(ctx context.Context, rt store.Runtime) (client.Runtime, error) {
	sb, err := a.runtimes.CurrentSandbox(ctx, rt)
	if err != nil {
		return client.Runtime{}, err
	}
	return runtimeOut(rt, sb, a.pricing()), nil
}

func (a *API) listRuntimes(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	rts, next, err := a.runtimes.Runtimes(ctx, ws.ID, page)
	if err != nil {
		return listError(err)
	}
	out, err := tryListOf(ctx, rts, next, a.runtimeView)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) getRuntime(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	out, err := a.runtimeView(r.Context(), rt)
	if err != nil {
		return err
	}
	if a.bindings != nil {
		if out.CapabilityProblems, err = a.bindings.Problems(r.Context(), rt); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// configureRuntime changes a runtime's settings (PATCH) and says which
// apply at once and which at the next start.
func (a *API) configureRuntime(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	var req client.RuntimePatch
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	patch := runtime.Patch{
		Image: req.Image, CPUMillis: req.CPUMillis, MemoryMB: req.MemoryMB, PidsLimit: req.PidsLimit,
		IdleTimeoutSeconds: req.IdleTimeoutSeconds, MaxLifetimeSeconds: req.MaxLifetimeSeconds,
		ArchiveAfterSeconds: req.ArchiveAfterSeconds, Secrets: req.Secrets, RootFS: req.RootFS,
		User: req.User, Harness: req.Harness, Model: req.Model,
	}
	if req.CapabilitiesJSON != nil {
		sidecars, err := sidecar.Parse(*req.CapabilitiesJSON)
		if err != nil {
			return err
		}
		patch.Sidecars = &sidecars
	}
	if n := req.Network; n != nil {
		if n.Mode != "" {
			patch.NetworkMode = &n.Mode
		}
		patch.Allow, patch.Deny = n.Allow, n.Deny
	}
	return a.applyPatch(w, r, rt, patch)
}

// applyPatch applies patch to rt and answers the runtime as written and
// when each change takes effect.
func (a *API) applyPatch(w http.ResponseWriter, r *http.Request, rt store.Runtime, patch runtime.Patch) error {
	ctx := r.Context()
	rt, change, err := a.runtimes.Configure(ctx, rt.ID, patch)
	if err != nil {
		return err
	}
	out, err := a.runtimeView(ctx, rt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.RuntimeUpdate{Runtime: out, Live: nonNil(change.Live), NextStart: nonNil(change.NextStart)})
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// listEgress lists the egress proxy's decisions about a runtime's
// traffic, newest first.
func (a *API) listEgress(w http.ResponseWriter, r *http.Request) error {
	rt, page, err := a.runtimePage(r)
	if err != nil {
		return err
	}
	ds, next, err := a.runtimes.Egress(r.Context(), rt.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ds, next, egressOut))
	return nil
}

// runtimeAction resolves the runtime, decodes an optional body into req,
// runs act and writes the runtime it returns.
func runtimeAction[T any](a *API, w http.ResponseWriter, r *http.Request, act func(ctx context.Context, rt store.Runtime, req T) (store.Runtime, error)) error {
	ctx := r.Context()
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	var req T
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	rt, err = act(ctx, rt, req)
	if err != nil {
		return err
	}
	return a.writeRuntime(ctx, w, rt)
}

type noBody struct{}

func (a *API) startRuntime(w http.ResponseWriter, r *http.Request) error {
	return runtimeAction(a, w, r, func(ctx context.Context, rt store.Runtime, req client.StartRuntimeRequest) (store.Runtime, error) {
		if len(req.SecretIDs) > maxSecretIDs {
			return rt, errdefs.InvalidArgument("invalid_secret_ids", "at most %d secret_ids", maxSecretIDs)
		}
		for _, id := range req.SecretIDs {
			if !isUUID(id) && !slugRE.MatchString(id) {
				return rt, errdefs.InvalidArgument("invalid_secret_ids", "secret id %q is neither a UUID nor a name", id)
			}
		}
		return a.runtimes.Start(ctx, rt.ID, req.SecretIDs)
	})
}

func (a *API) pauseRuntime(w http.ResponseWriter, r *http.Request) error {
	return runtimeAction(a, w, r, func(ctx context.Context, rt store.Runtime, _ noBody) (store.Runtime, error) {
		return a.runtimes.Pause(ctx, rt.ID, store.PauseUser)
	})
}

func (a *API) resumeRuntime(w http.ResponseWriter, r *http.Request) error {
	return runtimeAction(a, w, r, func(ctx context.Context, rt store.Runtime, _ noBody) (store.Runtime, error) {
		return a.runtimes.Resume(ctx, rt.ID)
	})
}

func (a *API) resetRuntime(w http.ResponseWriter, r *http.Request) error {
	return runtimeAction(a, w, r, func(ctx context.Context, rt store.Runtime, req client.ResetRequest) (store.Runtime, error) {
		return a.runtimes.Reset(ctx, rt.ID, req.WipeWorkspace)
	})
}

func (a *API) keepaliveRuntime(w http.ResponseWriter, r *http.Request) error {
	return runtimeAction(a, w, r, func(ctx context.Context, rt store.Runtime, req client.KeepaliveRequest) (store.Runtime, error) {
		if req.DurationSeconds < 0 || req.DurationSeconds > 10*365*24*3600 {
			return rt, errdefs.InvalidArgument("invalid_duration", "duration_seconds must be between 0 and ten years")
		}
		return a.runtimes.Keepalive(ctx, rt.ID, time.Duration(req.DurationSeconds)*time.Second)
	})
}
