package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/task"
)

// tasksComponent runs evaluation tasks in sandboxes of kind task made
// through the runtime service (and filled from a snapshot by the
// snapshots component, for a task made from one); it mounts their routes. Its Start fails
// the tasks a stopped server left unfinished and kills their sandboxes,
// before any task runs; its Close cancels the tasks running here, which
// kill their sandboxes, before the runtime service closes.
func (w *wiring) tasksComponent() component.Registration {
	return component.Def[*task.Service]{
		Name:     tasksName,
		Requires: []string{storeName, runtimeName, snapshotsName},
		Init: func(_ context.Context, ic *component.InitContext) (*task.Service, error) {
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
			s := task.New(task.Config{Store: in.st, Runtimes: rp.svc, Snapshots: snaps, Logger: in.logger.With("component", "tasks"), Now: w.now})
			w.mount(api.Tasks(s))
			return s, nil
		},
		Start: func(ctx context.Context, s *task.Service) error {
			_, err := s.Reconcile(ctx)
			return err
		},
		Close: func(_ context.Context, s *task.Service) error { return s.Close() },
	}.Registration()
}
