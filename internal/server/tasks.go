package server

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/task"
)

// leaseTasks: the sweep of the tasks whose runner is gone.
const leaseTasks = "tasks"

// tasksPart is the tasks component's instance: the service, and the
// sweep that runs under its lease from the server's start to its close.
type tasksPart struct {
	svc   *task.Service
	sweep automation
}

// tasksComponent runs evaluation tasks in sandboxes of kind task made
// through the runtime service (and filled from a snapshot by the
// snapshots component, for a task made from one); it mounts their routes.
// Its Start fails the tasks a stopped server left unfinished (this
// replica's own, and those of replicas whose presence has lapsed) and
// kills their sandboxes, before any task runs; then the replica that
// holds the tasks lease sweeps, every lease TTL, the tasks of replicas
// that died since. Its Close stops the sweep and cancels the tasks
// running here, which kill their sandboxes, before the runtime service
// closes.
func (w *wiring) tasksComponent() component.Registration {
	return component.Def[*tasksPart]{
		Name:     tasksName,
		Requires: []string{storeName, runtimeName, snapshotsName},
		Init: func(_ context.Context, ic *component.InitContext) (*tasksPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			snaps, err := component.Get[*snapshot.Service](ic, snapshotsName)
			if err != nil {
				return nil, err
			}
			logger := in.logger.With("component", "tasks")
			s := task.New(task.Config{Store: in.st, Runtimes: rp.svc, Snapshots: snaps, Replicas: in.presence, Logger: logger, Now: w.now})
			w.mount(api.Tasks(s))
			p := &tasksPart{svc: s}
			if !w.o.Manual {
				p.sweep.run = in.sweepUnder(leaseTasks, "tasks", s.Sweep, logger)
			}
			return p, nil
		},
		Start: func(ctx context.Context, p *tasksPart) error {
			// A row that could not be ended (logged) is left for a
			// sweep (a gone replica's) or the next start (this
			// replica's own); the server starts.
			if _, err := p.svc.Reconcile(ctx); err != nil && !errors.Is(err, lease.ErrRowsLeft) {
				return err
			}
			p.sweep.start(ctx)
			return nil
		},
		Close: func(_ context.Context, p *tasksPart) error {
			p.sweep.close()
			return p.svc.Close()
		},
	}.Registration()
}
