package api

import (
	"net/http"
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/pkg/client"
)

// A runtime's secret bindings, one at a time: the secrets (by id or
// name) its config's secrets names, listed, bound and unbound. A bind or
// an unbind is a configuration change (PATCH's secrets, checked the same
// way), applied to the bindings as they are when written.

func (a *API) listRuntimeSecrets(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.RuntimeSecrets{Secrets: nonNil(rt.Config.Secrets)})
	return nil
}

// bindRuntimeSecret binds {secret} to the runtime (PUT: binding one that
// is bound changes nothing); an unknown secret is 404 secret_not_found.
func (a *API) bindRuntimeSecret(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	ref := r.PathValue("secret")
	return a.applyPatch(w, r, rt, runtime.Patch{BindSecret: &ref})
}

// unbindRuntimeSecret removes {secret}, as the runtime's config names it,
// from its bindings: 404 secret_not_bound when it names no such one.
func (a *API) unbindRuntimeSecret(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	ref := r.PathValue("secret")
	if !slices.Contains(rt.Config.Secrets, ref) {
		return errdefs.NotFound("secret_not_bound", "secret %q is not bound to this runtime", ref)
	}
	return a.applyPatch(w, r, rt, runtime.Patch{UnbindSecret: &ref})
}
