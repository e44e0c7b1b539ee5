// Package snapshot takes snapshots of runtimes on request: a runtime's
// workspace files and its configuration, kept as one named, sized
// artifact at a destination (a local directory, or an S3-compatible
// bucket), listed, restored into the same runtime or into a new project,
// and deleted. The ledger bills the artifacts' size while they exist.
//
// Vocabulary:
//
//   - Workspace files: everything under provider.WorkspacePath, read and
//     written through the runtime's agent as a tar stream, so a snapshot
//     is the same on every provider that runs the agent.
//   - Freeze: while the workspace is copied, every process the agent runs
//     is stopped (SIGSTOP to its process group) and continued after, so
//     the copy is one moment of the workspace.
//   - Portable: a snapshot can be restored on a provider other than its
//     own when that provider can run its image with its configuration.
package snapshot

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Codes of the snapshot service's errors.
const (
	// CodeNotFound: no snapshot of that id the caller may see.
	CodeNotFound = "snapshot_not_found"
	// CodeNotPortable: the snapshot cannot be restored on the provider
	// asked for.
	CodeNotPortable = "snapshot_not_portable"
	// CodeArtifactMissing: the record is there, its artifact is not.
	CodeArtifactMissing = "snapshot_artifact_missing"
	// CodeDestinationUnavailable: the destination failed, or is not
	// configured any more.
	CodeDestinationUnavailable = "snapshot_destination_unavailable"
)

// Runtimes is what the service asks of the runtime service: every sandbox
// it needs goes through it (billed, expired, audited).
type Runtimes interface {
	AgentOf(ctx context.Context, rt store.Runtime) (*agentconn.Client, store.Runtime, error)
	Start(ctx context.Context, runtimeID string, secretIDs []string) (store.Runtime, error)
	Reset(ctx context.Context, runtimeID string, wipeWorkspace bool) (store.Runtime, error)
	CreateProject(ctx context.Context, ws store.Workspace, name, description string, req runtime.ConfigRequest) (store.Project, store.Runtime, error)
	DeleteProject(ctx context.Context, p store.Project) error
}

// Store is what the service keeps of snapshots.
type Store interface {
	store.SnapshotQueries
}

// Config is a Service's dependencies.
type Config struct {
	Store    Store
	Runtimes Runtimes
	// Destination is where new snapshots go; Others are destinations
	// snapshots taken before may be at (the local one after an S3 bucket
	// was configured).
	Destination Destination
	Others      []Destination
	Logger      *slog.Logger
	Now         func() time.Time
}

// Service takes, lists, restores and deletes snapshots.
type Service struct {
	store    Store
	runtimes Runtimes
	dest     Destination
	dests    map[string]Destination
	logger   *slog.Logger
	now      func() time.Time
}

// New is a snapshot service.
func New(c Config) *Service {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	dests := map[string]Destination{}
	for _, d := range append(c.Others, c.Destination) {
		dests[d.Name()] = d
	}
	return &Service{store: c.Store, runtimes: c.Runtimes, dest: c.Destination, dests: dests, logger: c.Logger, now: c.Now}
}

// destOf is the destination snap's artifact is at.
func (s *Service) destOf(snap store.Snapshot) (Destination, error) {
	if d, ok := s.dests[snap.Destination]; ok {
		return d, nil
	}
	return nil, errdefs.Unavailable(CodeDestinationUnavailable, "snapshot %s is kept at a %s destination this installation no longer has", snap.ID, snap.Destination)
}

// Create takes a snapshot named name ("" names it by the time) of rt: a
// paused or archived runtime is woken first, as for any operation in its
// sandbox; its processes are frozen while its workspace is copied.
func (s *Service) Create(ctx context.Context, rt store.Runtime, name string) (_ store.Snapshot, retErr error) {
	now := s.now().UTC()
	if name == "" {
		name = "snap-" + now.Format("20060102-150405")
	}
	if err := tenancy.ValidName("snapshot", name); err != nil {
		return store.Snapshot{}, err
	}
	c, rt, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return store.Snapshot{}, err
	}
	id := uuid.NewString()
	key := rt.OrgID + "/" + id + ".tar.gz"
	size, err := s.copyOut(ctx, c, key)
	if err != nil {
		return store.Snapshot{}, err
	}
	defer func() {
		if retErr != nil {
			s.removeArtifact(ctx, key)
		}
	}()
	snap := store.Snapshot{
		ID: id, OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID, Name: name,
		Provider: rt.Config.Provider, Image: rt.Config.Image, Config: rt.Config,
		Destination: s.dest.Name(), Location: key, SizeBytes: size, CreatedAt: now,
	}
	if err := s.store.CreateSnapshot(ctx, snap); err != nil {
		return store.Snapshot{}, err
	}
	s.logger.InfoContext(ctx, "took a snapshot", "snapshot", id, "runtime", rt.ID, "bytes", size)
	return s.store.GetSnapshot(ctx, id)
}

// Get returns the snapshot id of workspace ws; another workspace's is not
// found, as a missing one.
func (s *Service) Get(ctx context.Context, ws store.Workspace, id string) (store.Snapshot, error) {
	snap, err := s.store.GetSnapshot(ctx, id)
	if errdefs.IsNotFound(err) || (err == nil && snap.WorkspaceID != ws.ID) {
		return store.Snapshot{}, errdefs.NotFound(CodeNotFound, "no snapshot %s in this workspace", id)
	}
	return snap, err
}

// List lists ws's snapshots, only runtimeID's unless "".
func (s *Service) List(ctx context.Context, ws store.Workspace, runtimeID string, page store.Page) ([]store.Snapshot, string, error) {
	return s.store.ListSnapshots(ctx, ws.ID, runtimeID, page)
}

// Delete removes snap's artifact, then its record: a destination that
// fails leaves both, to be deleted again.
func (s *Service) Delete(ctx context.Context, snap store.Snapshot) error {
	d, err := s.destOf(snap)
	if err != nil {
		return err
	}
	if err := d.Delete(ctx, snap.Location); err != nil {
		if _, ok := errdefs.Public(err); ok {
			return err // the org's credentials are missing, say
		}
		return errdefs.Unavailable(CodeDestinationUnavailable, "the snapshot's destination did not delete it; try again").WithCause(err)
	}
	return s.store.DeleteSnapshot(ctx, snap.ID)
}

// removeArtifact deletes an artifact no record refers to; a failure is
// logged (it costs storage, not correctness).
func (s *Service) removeArtifact(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.dest.Delete(ctx, key); err != nil {
		s.logger.WarnContext(ctx, "removing a snapshot's artifact", "key", key, "err", err)
	}
}
