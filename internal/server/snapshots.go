package server

import (
	"context"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/snapshot"
)

// snapshotsComponent takes, restores and deletes snapshots of runtimes,
// kept under the data directory's snapshots/; it mounts their routes.
func (w *wiring) snapshotsComponent() component.Registration {
	return component.Def[*snapshot.Service]{
		Name:     snapshotsName,
		Requires: []string{storeName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*snapshot.Service, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			dest, err := snapshot.NewLocal(filepath.Join(w.dataDir, "snapshots"))
			if err != nil {
				return nil, err
			}
			s := snapshot.New(snapshot.Config{
				Store: in.st, Runtimes: rp.svc, Destination: dest,
				Logger: in.logger.With("component", "snapshots"), Now: w.now,
			})
			w.mount(api.Snapshots(s))
			return s, nil
		},
	}.Registration()
}
