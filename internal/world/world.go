// Package world runs worlds: sets of sandboxes started together on one
// private network, for multi-agent environments and training. Each
// member is a sandbox of kind world made through the runtime service
// (billed by the ledger like any sandbox), on its world's network, where
// the other members reach it by its member name and nothing else does.
// A world is started, paused, resumed and torn down as one: a member that
// cannot start takes the others down with it, and its network.
//
// A world is a store row (store.World) whose spec is this package's
// versioned document (Spec). Worlds are made and deleted on the server
// (replica) that was asked, their runner; one left starting or deleting
// by a runner that stopped is torn down by its next start or, once its
// presence has lapsed, by any replica's reconciliation, and one left
// running or paused is checked against its compute at start (see
// Service.Reconcile and Sweep).
package world

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Codes of the world's errors.
const (
	CodeInvalid  = "invalid_world"
	CodeNotFound = "world_not_found"
	// CodeMemberNotFound: the world has no member of that name.
	CodeMemberNotFound = "world_member_not_found"
	// CodeConflict: the world is not in a status the action applies to
	// (starting, deleting, or gone).
	CodeConflict = "world_conflict"
)

// Bounds of a world request.
const (
	MaxMembers  = 16
	MaxArgs     = 256
	specVersion = 1
)

// Member is one sandbox of a world, as its spec keeps it.
type Member struct {
	Name     string              `json:"name"`
	Template string              `json:"template,omitempty"`
	Config   store.RuntimeConfig `json:"config"`
	// Command, when set, is started in the background in the member once
	// every member runs.
	Command []string `json:"command,omitempty"`
	// SandboxID is its ledger row, named before the sandbox exists.
	SandboxID string `json:"sandbox_id"`
}

// Spec is a world's document: its provider and members, and why it
// failed when it did.
type Spec struct {
	V        int      `json:"v"`
	Provider string   `json:"provider"`
	Members  []Member `json:"members"`
	Error    string   `json:"error,omitempty"`
}

// World is a stored world with its spec decoded.
type World struct {
	store.World
	Spec Spec
}

// Member returns the member called name.
func (w World) Member(name string) (Member, bool) {
	for _, m := range w.Spec.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// Runtimes is what worlds use of the runtime service.
type Runtimes interface {
	TaskSource(ctx context.Context, ws store.Workspace, req store.RuntimeConfig) (store.Runtime, error)
	Template(ctx context.Context, ws store.Workspace, ref string) (store.Template, error)
	WorldsSupported(providerName string) error
	CreateWorldNetwork(ctx context.Context, providerName, world string) error
	RemoveWorldNetwork(ctx context.Context, providerName, world string) error
	WorldNetworks(ctx context.Context) (map[string][]string, error)
	StartWorldSandbox(ctx context.Context, id string, src store.Runtime, world, member string) (store.Sandbox, error)
	WorldAgent(sb store.Sandbox) (*agentconn.Client, error)
	EndWorldSandbox(ctx context.Context, sandboxID, reason string) (store.Sandbox, error)
	InspectWorldSandbox(ctx context.Context, sb store.Sandbox) (provider.Status, error)
	PauseWorldSandbox(ctx context.Context, sandboxID string) (store.Sandbox, error)
	ResumeWorldSandbox(ctx context.Context, sandboxID string) (store.Sandbox, error)
}

// Store is what worlds use of the store.
type Store interface {
	CreateWorld(ctx context.Context, w store.World) error
	GetWorld(ctx context.Context, id string) (store.World, error)
	ListWorlds(ctx context.Context, workspaceID string, page store.Page) ([]store.World, string, error)
	UpdateWorld(ctx context.Context, w store.World, from string) (bool, error)
	ListLiveWorlds(ctx context.Context) ([]store.World, error)
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
}

// Config configures a Service.
type Config struct {
	Store    Store
	Runtimes Runtimes
	// Replicas tells this replica's id, recorded as the runner of the
	// worlds it makes and deletes, and which replicas are live, so a
	// reconciliation tears down only the creates and deletes no live
	// replica is making; nil: one server alone, whose start-up
	// reconciliation takes every one and which sweeps nothing while it
	// runs.
	Replicas lease.Replicas
	Logger   *slog.Logger
	Now      func() time.Time
}

// Service makes, lists, pauses, resumes and deletes worlds. Actions on
// one world are serialized in this process by its lock.
type Service struct {
	store    Store
	runtimes Runtimes
	replicas lease.Replicas
	logger   *slog.Logger
	now      func() time.Time

	mu     sync.Mutex
	locks  map[string]*worldLock
	closed bool
}

// worldLock serializes the actions on one world; it goes from the map
// once no action holds or waits for it.
type worldLock struct {
	sync.Mutex
	users int
}

// New makes a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: cfg.Store, runtimes: cfg.Runtimes, replicas: cfg.Replicas, logger: cfg.Logger, now: cfg.Now, locks: map[string]*worldLock{}}
}

// Close refuses new worlds; the worlds that run keep running (a world is
// not a process of this server) and the next start reconciles them.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// lock takes world id's lock and returns its release.
func (s *Service) lock(id string) func() {
	s.mu.Lock()
	l, ok := s.locks[id]
	if !ok {
		l = &worldLock{}
		s.locks[id] = l
	}
	l.users++
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.locks, id)
		}
		s.mu.Unlock()
	}
}

// Decode reads a stored world's spec.
func Decode(w store.World) (World, error) {
	out := World{World: w}
	if err := json.Unmarshal(w.Spec, &out.Spec); err != nil {
		return out, fmt.Errorf("world %s: spec: %w", w.ID, err)
	}
	if out.Spec.V != specVersion {
		return out, fmt.Errorf("world %s: spec version %d is not %d", w.ID, out.Spec.V, specVersion)
	}
	return out, nil
}

// Get returns the world id of ws; another workspace's is not found.
func (s *Service) Get(ctx context.Context, ws store.Workspace, id string) (World, error) {
	w, err := s.store.GetWorld(ctx, id)
	if err == nil && w.WorkspaceID != ws.ID {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return World{}, errdefs.NotFound(CodeNotFound, "world %s not found", id)
	}
	if err != nil {
		return World{}, err
	}
	return Decode(w)
}

// List lists ws's worlds, oldest first.
func (s *Service) List(ctx context.Context, ws store.Workspace, page store.Page) ([]World, string, error) {
	rows, next, err := s.store.ListWorlds(ctx, ws.ID, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]World, 0, len(rows))
	for _, r := range rows {
		w, err := Decode(r)
		if err != nil {
			return nil, "", err
		}
		out = append(out, w)
	}
	return out, next, nil
}

// Members returns the ledger rows of w's members, in its order; a member
// whose row was never made is left out.
func (s *Service) Members(ctx context.Context, w World) ([]store.Sandbox, error) {
	var out []store.Sandbox
	for _, m := range w.Spec.Members {
		sb, err := s.store.GetSandbox(ctx, m.SandboxID)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sb)
	}
	return out, nil
}

// write stores w's status and spec if it is still in from.
func (s *Service) write(ctx context.Context, w *World, status, from string) (bool, error) {
	spec, err := json.Marshal(w.Spec)
	if err != nil {
		return false, err
	}
	next := w.World
	next.Status, next.Spec = status, spec
	ok, err := s.store.UpdateWorld(context.WithoutCancel(ctx), next, from)
	if ok {
		w.World = next
	}
	return ok, err
}

// newWorld is a starting world of ws with spec.
func (s *Service) newWorld(ws store.Workspace, name string, spec Spec) (World, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return World{}, err
	}
	return World{World: store.World{ID: uuid.NewString(), OrgID: ws.OrgID, WorkspaceID: ws.ID, Name: name,
		Status: store.WorldStarting, Spec: raw, CreatedAt: s.now(), Runner: s.replica()}, Spec: spec}, nil
}

// replica is this replica's id, the runner of the worlds it makes and
// deletes; "" for a server alone.
func (s *Service) replica() string {
	if s.replicas == nil {
		return ""
	}
	return s.replicas.Replica()
}
