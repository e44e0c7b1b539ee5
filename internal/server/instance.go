package server

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// instancePart is instance mode: the one runtime the installation serves
// under /api/sandbox, found (or made) as the server starts.
type instancePart struct {
	cfg      config.InstanceConfig
	st       store.Store
	tenancy  *tenancy.Service
	runtimes *runtime.Service
	target   atomic.Pointer[api.Sandbox]
}

// instanceComponent is instance mode, when the instance setting names a
// runtime (org/workspace/project): it mounts the instance routes, which
// mirror the runtime routes of the features before it (sessions,
// snapshots, the SSH gateway's), and its Start finds the project, making
// the org, workspace and project (from instance_template) that do not
// exist. Not configured, it has no instance and mounts nothing.
func (w *wiring) instanceComponent() component.Registration {
	return component.Def[*instancePart]{
		Name:     instanceName,
		Requires: []string{storeName, accessName, runtimeName, ledgerName, sessionsName, snapshotsName, sshName},
		Init: func(_ context.Context, ic *component.InitContext) (*instancePart, error) {
			cfg, err := component.SectionOf[*config.InstanceConfig](ic)
			if err != nil || cfg.Instance == "" {
				return nil, err
			}
			p := &instancePart{cfg: *cfg}
			if err := p.check(); err != nil {
				return nil, err
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			ap, err := component.Get[*accessPart](ic, accessName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			p.st, p.tenancy, p.runtimes = in.st, ap.tenancy, rp.svc
			w.mount(api.Instance(p.sandbox))
			return p, nil
		},
		Start: func(ctx context.Context, p *instancePart) error {
			if p == nil {
				return nil
			}
			return p.start(ctx)
		},
	}.Registration()
}

// sandbox is the instance's runtime, once Start has found it.
func (p *instancePart) sandbox() (api.Sandbox, bool) {
	s := p.target.Load()
	if s == nil {
		return api.Sandbox{}, false
	}
	return *s, true
}

// check refuses names of the wrong shape before anything starts.
func (p *instancePart) check() error {
	org, ws, project, ok := p.cfg.Names()
	if !ok {
		return fmt.Errorf("instance (PADDOCK_INSTANCE) %q is not org/workspace/project", p.cfg.Instance)
	}
	for _, n := range []struct{ kind, name string }{{"org", org}, {"workspace", ws}, {"project", project}} {
		if err := tenancy.ValidName(n.kind, n.name); err != nil {
			return fmt.Errorf("instance (PADDOCK_INSTANCE): %s", errdefs.PublicMessage(err, err.Error()))
		}
	}
	return nil
}

// start finds the instance's org, workspace and project, making those
// that do not exist, and serves its runtime. Another replica making the
// same one at once is no error: the one it made is found.
func (p *instancePart) start(ctx context.Context) error {
	orgName, wsName, projectName, _ := p.cfg.Names()
	org, err := findOrMake(func() (store.Org, error) { return p.st.GetOrgByName(ctx, orgName) },
		func() (store.Org, error) { return p.tenancy.CreateOrg(ctx, orgName) })
	if err != nil {
		return p.refuse("org", err)
	}
	ws, err := findOrMake(func() (store.Workspace, error) { return p.st.GetWorkspaceByName(ctx, org.ID, wsName) },
		func() (store.Workspace, error) { return p.tenancy.CreateWorkspace(ctx, org, wsName) })
	if err != nil {
		return p.refuse("workspace", err)
	}
	project, err := findOrMake(func() (store.Project, error) { return p.tenancy.Project(ctx, ws, projectName) },
		func() (store.Project, error) { return p.makeProject(ctx, ws, projectName) })
	if err != nil {
		return p.refuse("project", err)
	}
	runtimeID, err := p.runtimes.RuntimeIDOf(ctx, project.ID)
	if err != nil {
		return p.refuse("project's runtime", err)
	}
	p.target.Store(&api.Sandbox{Org: org.Name, Workspace: ws.Name, Runtime: runtimeID})
	return nil
}

// makeProject makes the instance's project, from instance_template when
// it names one.
func (p *instancePart) makeProject(ctx context.Context, ws store.Workspace, name string) (store.Project, error) {
	var cfg store.RuntimeConfig
	if p.cfg.InstanceTemplate != "" {
		t, err := p.runtimes.Template(ctx, ws, p.cfg.InstanceTemplate)
		if err != nil {
			return store.Project{}, fmt.Errorf("instance_template (PADDOCK_INSTANCE_TEMPLATE) %q: %s", p.cfg.InstanceTemplate, errdefs.PublicMessage(err, err.Error()))
		}
		cfg = runtime.FromTemplate(t.Config, cfg)
	}
	pr, _, err := p.runtimes.CreateProject(ctx, ws, name, "the installation's instance (instance setting)", cfg)
	return pr, err
}

// refuse is a start refused over the instance's what, naming the setting.
func (p *instancePart) refuse(what string, err error) error {
	return fmt.Errorf("instance (PADDOCK_INSTANCE) %q: its %s: %s", p.cfg.Instance, what, errdefs.PublicMessage(err, err.Error()))
}

// findOrMake is what find finds, or else what make makes; when make
// conflicts (another replica made it meanwhile), what find finds then.
func findOrMake[T any](find, make func() (T, error)) (T, error) {
	t, err := find()
	if !errdefs.IsNotFound(err) {
		return t, err
	}
	t, err = make()
	if errdefs.IsConflict(err) {
		return find()
	}
	return t, err
}
