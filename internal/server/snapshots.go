package server

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/snapshot"
)

// snapshotsComponent takes, restores and deletes snapshots of runtimes,
// kept under the data directory's snapshots/ or in the S3-compatible
// bucket configured (checked here: a refused one stops the start); it
// mounts their routes.
func (w *wiring) snapshotsComponent() component.Registration {
	return component.Def[*snapshot.Service]{
		Name:     snapshotsName,
		Requires: []string{storeName, runtimeName},
		Init: func(ctx context.Context, ic *component.InitContext) (*snapshot.Service, error) {
			cfg, err := component.SectionOf[*config.SnapshotsConfig](ic)
			if err != nil {
				return nil, err
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			local, err := snapshot.NewLocal(filepath.Join(w.dataDir, "snapshots"))
			if err != nil {
				return nil, err
			}
			dest, others := snapshot.Destination(local), []snapshot.Destination(nil)
			if cfg.SnapshotsS3Endpoint != "" {
				s3, err := snapshot.NewS3(ctx, snapshot.S3Config{
					Endpoint: cfg.SnapshotsS3Endpoint, Bucket: cfg.SnapshotsS3Bucket, Region: cfg.SnapshotsS3Region,
					AccessKey: cfg.SnapshotsS3AccessKey, SecretKey: cfg.SnapshotsS3SecretKey, AllowInternal: cfg.SnapshotsS3AllowInternal,
				})
				if err != nil {
					return nil, fmt.Errorf("snapshots: %s", errdefs.PublicMessage(err, err.Error()))
				}
				dest, others = s3, []snapshot.Destination{local}
			}
			s := snapshot.New(snapshot.Config{
				Store: in.st, Runtimes: rp.svc, Destination: dest, Others: others,
				Logger: in.logger.With("component", "snapshots"), Now: w.now,
			})
			w.mount(api.Snapshots(s))
			return s, nil
		},
	}.Registration()
}
