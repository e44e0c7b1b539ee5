package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/snapshot"
)

// snapshotsComponent takes, restores and deletes snapshots of runtimes,
// kept under the data directory's snapshots/ or in the S3-compatible
// bucket configured (checked here: a refused one stops the start); it
// mounts their routes.
func (w *wiring) snapshotsComponent() component.Registration {
	return component.Def[*snapshot.Service]{
		Name:     snapshotsName,
		Requires: []string{storeName, runtimeName, secretsName},
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
				s3cfg, err := s3Config(cfg, ic)
				if err != nil {
					return nil, err
				}
				s3, err := snapshot.NewS3(ctx, s3cfg)
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

// s3Config is the snapshot bucket of cfg: with the installation's keys,
// or with each org's, from its secrets of the names cfg gives (both
// names, and no keys of its own).
func s3Config(cfg *config.SnapshotsConfig, ic *component.InitContext) (snapshot.S3Config, error) {
	c := snapshot.S3Config{
		Endpoint: cfg.SnapshotsS3Endpoint, Bucket: cfg.SnapshotsS3Bucket, Region: cfg.SnapshotsS3Region,
		AccessKey: cfg.SnapshotsS3AccessKey, SecretKey: cfg.SnapshotsS3SecretKey, AllowInternal: cfg.SnapshotsS3AllowInternal,
	}
	akName, skName := cfg.SnapshotsS3AccessKeySecret, cfg.SnapshotsS3SecretKeySecret
	switch {
	case akName == "" && skName == "":
		return c, nil
	case akName == "" || skName == "":
		return c, errors.New("snapshots: set both snapshots_s3_access_key_secret and snapshots_s3_secret_key_secret, or neither")
	case c.AccessKey != "" || c.SecretKey != "":
		return c, errors.New("snapshots: the bucket's keys come from the installation (snapshots_s3_access_key, _secret_key) or from each org's secrets (…_secret), not both")
	}
	sec, err := component.Get[*secrets.Service](ic, secretsName)
	if err != nil {
		return c, err
	}
	c.OrgCredentials = func(ctx context.Context, orgID string) (string, string, error) {
		ak, err := sec.OrgValue(ctx, orgID, akName)
		if err != nil {
			return "", "", err
		}
		sk, err := sec.OrgValue(ctx, orgID, skName)
		return ak, sk, err
	}
	return c, nil
}
