package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"sort"

	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// bindingsOf resolves the binding service and the runtime of a request.
func (a *API) bindingsOf(r *http.Request) (*binding.Service, store.Runtime, error) {
	rt, err := a.runtimeOf(r)
	return a.bindings, rt, err
}

// inventoryOf resolves the binding service and the org of a request.
func (a *API) inventoryOf(r *http.Request) (*binding.Service, store.Org, error) {
	o, err := a.org(r)
	return a.bindings, o, err
}

// listCatalog lists the built-in catalog.
func (a *API) listCatalog(w http.ResponseWriter, r *http.Request) error {
	out := client.List[client.CapabilityVersion]{Items: []client.CapabilityVersion{}}
	for _, b := range capability.Catalog() {
		out.Items = append(out.Items, catalogOut(b))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func catalogOut(b *capability.Bundle) client.CapabilityVersion {
	return client.CapabilityVersion{
		Source: client.SourceCatalog, Name: b.Name, Version: b.Version, Description: b.Description,
		Digest: b.Digest, SizeBytes: int64(len(b.Tar())), Contents: contentsOut(binding.ContentsOf(b)),
	}
}

func inventoryOut(v store.CapabilityVersion) client.CapabilityVersion {
	created := v.CreatedAt
	return client.CapabilityVersion{
		ID: v.ID, Source: client.SourceInventory, Name: v.Name, Version: v.Version, Description: v.Description,
		Digest: v.Digest, SizeBytes: v.SizeBytes, Contents: contentsOut(binding.DecodeContents(v.Contents)), CreatedAt: &created,
	}
}

// contentsOut shows what a bundle ships, field for field.
func contentsOut(c binding.Contents) client.CapabilityContents {
	return client.CapabilityContents{
		Agents: c.Agents, Skills: c.Skills, Tools: c.Tools, MCPServers: c.MCPServers, Workers: c.Workers,
		Setup: c.Setup, Checks: c.Checks,
		Flags: convertAll(c.Flags, func(f binding.Flag) client.CapabilityFlag {
			return client.CapabilityFlag{Name: f.Name, Description: f.Description, Default: f.Default}
		}),
	}
}

// statusOut shows a binding's status, field for field.
func statusOut(st binding.Status) *client.BindingStatus {
	return &client.BindingStatus{
		State: st.State, Error: st.Error, SandboxID: st.SandboxID, AppliedAt: st.AppliedAt,
		Setup: convertAll(st.Setup, stepOut), Checks: convertAll(st.Checks, stepOut),
		Workers: convertAll(st.Workers, func(w binding.WorkerStatus) client.WorkerStatus {
			return client.WorkerStatus{Name: w.Name, ProcessID: w.ProcessID, State: w.State, ExitCode: w.ExitCode, StartedAt: w.StartedAt, Output: w.Output}
		}),
	}
}

func stepOut(r binding.StepResult) client.StepResult {
	return client.StepResult{Name: r.Name, OK: r.OK, ExitCode: r.ExitCode, Output: r.Output, DurationMS: r.DurationMS, RanAt: r.RanAt}
}

// convertAll converts each of in; nil stays nil, so that the wire shows
// null or [] as the domain value has it.
func convertAll[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

// installIn is an install request as the binding service takes it.
func installIn(req client.InstallCapabilityRequest) binding.InstallRequest {
	in := binding.InstallRequest{Name: req.Name, Version: req.Version, Source: req.Source, Enabled: req.Enabled}
	if req.Config != nil {
		in.Flags = req.Config.Flags
	}
	return in
}

// updateIn is an update request as the binding service takes it: a config
// given replaces the binding's.
func updateIn(req client.UpdateBindingRequest) binding.UpdateRequest {
	in := binding.UpdateRequest{Enabled: req.Enabled, Version: req.Version}
	if req.Config != nil {
		in.SetFlags, in.Flags = true, req.Config.Flags
	}
	return in
}

// listInventory lists the org's inventory.
func (a *API) listInventory(w http.ResponseWriter, r *http.Request) error {
	svc, o, err := a.inventoryOf(r)
	if err != nil {
		return err
	}
	name := r.URL.Query().Get("name")
	if name != "" && !capability.ValidName(name) {
		return errdefs.InvalidArgument("invalid_name", "capability name %q is not valid", name)
	}
	vs, err := svc.Inventory(r.Context(), o.ID, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listOf(vs, "", inventoryOut))
	return nil
}

// pushCapability adds a bundle (tar.gz or tar) to the org's inventory.
func (a *API) pushCapability(w http.ResponseWriter, r *http.Request) error {
	svc, o, err := a.inventoryOf(r)
	if err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/gzip" && mt != "application/x-tar" && mt != "application/x-gzip") {
		return &errdefs.Error{Kind: errdefs.ErrInvalidArgument, Code: "unsupported_media_type",
			Message: "the request body must be a capability bundle as application/gzip (tar.gz) or application/x-tar"}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return bodyTooLarge(maxErr)
		}
		return err
	}
	v, created, err := svc.Push(r.Context(), o.ID, bytes.NewReader(body))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, inventoryOut(v))
	return nil
}

// deleteCapabilityVersion removes a version from the org's inventory.
func (a *API) deleteCapabilityVersion(w http.ResponseWriter, r *http.Request) error {
	svc, o, err := a.inventoryOf(r)
	if err != nil {
		return err
	}
	if err := svc.DeleteVersion(r.Context(), o.ID, r.PathValue("name"), r.PathValue("version")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// bindingOut shows b of a runtime whose current sandbox is sandboxID.
func bindingOut(b store.CapabilityBinding, sandboxID string) client.CapabilityBinding {
	st := binding.StatusOf(b, sandboxID)
	flags := b.Flags
	if len(flags) == 0 {
		flags = nil
	}
	return client.CapabilityBinding{
		ID: b.ID, RuntimeID: b.RuntimeID, Source: b.Source, Name: b.Name, Version: b.Version, Enabled: b.Enabled,
		Config: client.BindingConfig{Flags: flags}, Status: statusOut(st), CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
	}
}

// listBindings lists the runtime's capability bindings.
func (a *API) listBindings(w http.ResponseWriter, r *http.Request) error {
	svc, rt, err := a.bindingsOf(r)
	if err != nil {
		return err
	}
	bs, err := svc.Bindings(r.Context(), rt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listOf(bs, "", func(b store.CapabilityBinding) client.CapabilityBinding {
		return bindingOut(b, rt.CurrentSandboxID)
	}))
	return nil
}

// installCapability binds a capability to the runtime.
func (a *API) installCapability(w http.ResponseWriter, r *http.Request) error {
	var req client.InstallCapabilityRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	svc, rt, err := a.bindingsOf(r)
	if err != nil {
		return err
	}
	b, err := svc.Install(r.Context(), rt, installIn(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, bindingOut(b, rt.CurrentSandboxID))
	return nil
}

// updateBinding enables, disables, configures or re-pins a binding.
func (a *API) updateBinding(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateBindingRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	svc, rt, err := a.bindingsOf(r)
	if err != nil {
		return err
	}
	b, err := svc.Update(r.Context(), rt, r.PathValue("binding_id"), updateIn(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, bindingOut(b, rt.CurrentSandboxID))
	return nil
}

// uninstallCapability removes a binding.
func (a *API) uninstallCapability(w http.ResponseWriter, r *http.Request) error {
	svc, rt, err := a.bindingsOf(r)
	if err != nil {
		return err
	}
	if err := svc.Uninstall(r.Context(), rt, r.PathValue("binding_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// resolvedCapabilities answers the merged set of the runtime's enabled
// bindings.
func (a *API) resolvedCapabilities(w http.ResponseWriter, r *http.Request) error {
	svc, rt, err := a.bindingsOf(r)
	if err != nil {
		return err
	}
	res, bs, err := svc.Resolved(r.Context(), rt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resolvedOut(rt, res, bs))
	return nil
}

func resolvedOut(rt store.Runtime, res capability.Resolved, bs []store.CapabilityBinding) client.ResolvedCapabilities {
	out := client.ResolvedCapabilities{
		RuntimeID: rt.ID, Path: capability.Root,
		Bindings: []client.ResolvedBinding{}, Agents: items(res.Agents), Skills: items(res.Skills), Tools: items(res.Tools),
		MCPServers: []client.ResolvedMCPServer{}, Workers: []client.ResolvedItem{}, Setup: []client.ResolvedItem{},
		Checks: []client.ResolvedItem{}, Conflicts: []client.CapabilityConflict{},
	}
	for _, b := range bs {
		if b.Enabled {
			st := binding.StatusOf(b, rt.CurrentSandboxID)
			out.Bindings = append(out.Bindings, client.ResolvedBinding{ID: b.ID, Name: b.Name, Version: b.Version, Status: statusOut(st)})
		}
	}
	for _, m := range res.MCPServers {
		out.MCPServers = append(out.MCPServers, client.ResolvedMCPServer{
			Name: m.Name, Capability: m.Capability, Type: m.Type, Command: m.Command, Args: m.Args, Env: m.Env, URL: m.URL,
		})
	}
	for _, wk := range res.Workers {
		out.Workers = append(out.Workers, client.ResolvedItem{Name: wk.Name, Capability: wk.Capability})
	}
	for _, s := range res.Setup {
		out.Setup = append(out.Setup, client.ResolvedItem{Name: s.Name, Capability: s.Capability})
	}
	for _, s := range res.Checks {
		out.Checks = append(out.Checks, client.ResolvedItem{Name: s.Name, Capability: s.Capability})
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, client.CapabilityConflict{Kind: c.Kind, Name: c.Name, Capabilities: c.Capabilities})
	}
	sort.SliceStable(out.Conflicts, func(i, j int) bool { return out.Conflicts[i].Name < out.Conflicts[j].Name })
	return out
}

func items(in []capability.Item) []client.ResolvedItem {
	out := make([]client.ResolvedItem, 0, len(in))
	for _, it := range in {
		out = append(out, client.ResolvedItem{Name: it.Name, Description: it.Description, Capability: it.Capability, Path: it.Path})
	}
	return out
}
