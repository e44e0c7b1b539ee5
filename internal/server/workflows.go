package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/workflow"
)

// leaseWorkflows: the loop that runs workflows and starts their
// scheduled runs.
const leaseWorkflows = "workflows"

// workflowsPart is the workflows component's instance: the service, and
// the loop that runs workflows under their lease from the server's start
// to its close.
type workflowsPart struct {
	svc  *workflow.Service
	loop automation
}

// workflowsComponent keeps workflows (steps run in order on a runtime,
// optionally on a schedule) and mounts their routes. From its Start the
// replica that holds the workflows lease runs them, resuming the runs a
// stopped server left; its Close stops that loop (the runs stop where
// they are, for the next holder) before the tasks and sessions close.
func (w *wiring) workflowsComponent() component.Registration {
	return component.Def[*workflowsPart]{
		Name:     workflowsName,
		Requires: []string{storeName, runtimeName, sessionsName, tasksName},
		Init: func(_ context.Context, ic *component.InitContext) (*workflowsPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			sess, err := component.Get[*session.Service](ic, sessionsName)
			if err != nil {
				return nil, err
			}
			tp, err := component.Get[*tasksPart](ic, tasksName)
			if err != nil {
				return nil, err
			}
			tasks := tp.svc
			s := workflow.New(workflow.Config{Store: in.st, Runtimes: rp.svc, Prompts: sess, Tasks: tasks,
				Logger: in.logger.With("component", "workflows"), Now: w.now})
			w.mount(api.Workflows(s))
			p := &workflowsPart{svc: s}
			p.loop.run = func(ctx context.Context) { in.leases.Run(ctx, leaseWorkflows, s.Loop) }
			return p, nil
		},
		Start: func(ctx context.Context, p *workflowsPart) error {
			p.loop.start(ctx)
			return nil
		},
		Close: func(_ context.Context, p *workflowsPart) error {
			err := p.svc.Close()
			p.loop.close()
			return err
		},
	}.Registration()
}
