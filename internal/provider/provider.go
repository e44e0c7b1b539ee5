// Package provider is the contract between paddock and the compute that backs
// a sandbox. It holds the interface, the spec a sandbox is created from, the
// handle a provider returns, the capabilities it declares, and a registry.
//
// Vocabulary:
//
//   - Spec: what to run — image, resources, workspace volume, network policy,
//     labels that tie the compute to its ledger row.
//   - Handle: what a provider returns for created compute. ID is the
//     provider's own sandbox id (a container id for Docker). State is opaque,
//     versioned recovery state the store persists so a restarted server can
//     re-attach instead of orphaning compute.
//   - Status: what the provider observes the compute to be doing now.
//   - Agent: the byte stream to the in-sandbox agent (paddock-shim). Everything
//     that happens inside a sandbox goes through it, so every provider gets
//     exec, files and terminals for free.
//
// The interface covers lifecycle only. Every method takes ctx first. A
// provider that cannot do something returns an error of kind
// errdefs.ErrNotImplemented, never a silent no-op. Extras are optional
// interfaces the caller type-asserts (Lister, WorkspaceRemover).
package provider

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Provider turns a Spec into running compute.
type Provider interface {
	// Name is the provider's registry name ("docker", "fake").
	Name() string
	// Capabilities declares what this provider can do.
	Capabilities() Capabilities
	// Create provisions compute for spec without starting it (a Docker
	// container is created, its workspace volume ensured). On error nothing
	// is left behind: a provider cleans up its own partial work.
	Create(ctx context.Context, spec Spec) (Handle, error)
	// Start runs created compute and returns once its agent accepts
	// connections (when Capabilities.Agent). On error the compute may
	// remain; the caller destroys it.
	Start(ctx context.Context, h Handle) error
	// Pause suspends the compute, keeping its memory and filesystem.
	Pause(ctx context.Context, h Handle) error
	// Resume continues paused compute.
	Resume(ctx context.Context, h Handle) error
	// Destroy releases the compute. Destroying compute that no longer
	// exists is not an error. The workspace volume is kept.
	Destroy(ctx context.Context, h Handle) error
	// Inspect reports the compute's observed status. Compute that no
	// longer exists yields an error of kind errdefs.ErrNotFound.
	Inspect(ctx context.Context, h Handle) (Status, error)
	// DialAgent opens a new byte stream to the in-sandbox agent.
	DialAgent(ctx context.Context, h Handle) (net.Conn, error)
}

// Lister is implemented by providers that can enumerate the compute they
// manage, for the reconciler. Only compute carrying LabelInstance=instance is
// returned.
type Lister interface {
	List(ctx context.Context, instance string) ([]Listed, error)
}

// Listed is one piece of compute found by a Lister.
type Listed struct {
	Handle Handle
	Labels map[string]string
	Status Status
}

// Grouper is implemented by providers that put a group of sandboxes (a
// world's) on one private network of their own: the members reach each
// other by name and nothing else (no egress, not the host, not another
// group's members). CreateGroup makes the network of the group id (a
// network that exists already is kept); RemoveGroup removes it (one that
// does not exist is not an error; one a sandbox is still on is); Groups
// lists the ids of the groups of this installation that have a network,
// for the reconciler. A provider without it cannot run a world.
type Grouper interface {
	CreateGroup(ctx context.Context, id string) error
	RemoveGroup(ctx context.Context, id string) error
	Groups(ctx context.Context) ([]string, error)
}

// WorkspaceRemover is implemented by providers whose workspace volumes
// outlive their compute. RemoveWorkspace deletes the named volume; a volume
// that does not exist is not an error.
type WorkspaceRemover interface {
	RemoveWorkspace(ctx context.Context, name string) error
}

// Snapshotter is implemented by providers that can save a sandbox's
// filesystem so that a later sandbox starts from it: how a runtime is
// archived. Snapshot saves the changes the compute made to its own
// filesystem (not the workspace volume, which outlives the compute anyway)
// as an image-like artifact and returns a reference that a later
// Spec.Image accepts. It works on running and paused compute and leaves the
// compute as it was. labels are put on the artifact so it can be traced and
// cleaned up (they include LabelInstance). RemoveSnapshot deletes it; a
// reference that no longer exists is not an error, and one still used by
// compute is not deleted under it (Docker keeps it under a second name
// until a later RemoveSnapshot of the same reference, once nothing uses
// it).
//
// Snapshots are internal: IsSnapshot tells a snapshot's reference apart
// from an image a user may name, so that no runtime can start from
// another's snapshot, and Create refuses a snapshot whose LabelRuntime is
// not the spec's runtime.
type Snapshotter interface {
	Snapshot(ctx context.Context, h Handle, labels map[string]string) (string, error)
	RemoveSnapshot(ctx context.Context, ref string) error
	IsSnapshot(ref string) bool
}

// AgentLogger is implemented by providers that keep what the in-sandbox
// agent itself wrote (its own log, not the output of the processes it
// runs, which go to the agent): the last tail lines of it, for `paddock
// sandbox logs`.
type AgentLogger interface {
	AgentLog(ctx context.Context, h Handle, tail int) (string, error)
}

// Sizer is implemented by providers that know the largest sandbox their
// host can run (cores and memory), so a runtime asking for more is refused
// when it is configured instead of failing at every start.
type Sizer interface {
	Capacity(ctx context.Context) (Resources, error)
}

// ImageInspector is implemented by providers that can read an image's
// labels, which tell what the image carries (the harness CLIs installed
// in it, under LabelHarnesses). A missing image is ErrNotFound.
type ImageInspector interface {
	ImageLabels(ctx context.Context, image string) (map[string]string, error)
}

// ImagePresent reports whether image is on in's engine (false, nil when it
// is not; an error when the engine cannot tell).
func ImagePresent(ctx context.Context, in ImageInspector, image string) (bool, error) {
	_, err := in.ImageLabels(ctx, image)
	if errors.Is(err, errdefs.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ImageChecker is implemented by providers that can tell, before any
// sandbox starts, whether they can run an image: it is there, or (for a
// provider that pulls what it lacks) its registry has it. An image they
// cannot run is ErrNotFound.
type ImageChecker interface {
	CheckImage(ctx context.Context, image string) error
}

// LabelHarnesses lists the agent harness CLIs an image carries, as
// "name=version,…" (scripts/build-images.sh writes it).
const LabelHarnesses = "dev.paddock.harnesses"

// Labels every provider puts on the compute it creates (as container labels,
// VM metadata, pod labels…) so compute can be traced to its ledger row.
const (
	LabelManaged   = "dev.paddock.managed"   // always "true"
	LabelInstance  = "dev.paddock.instance"  // installation id; tests use a unique one
	LabelSandbox   = "dev.paddock.sandbox"   // ledger row UUID
	LabelRuntime   = "dev.paddock.runtime"   // runtime UUID, if any
	LabelOrg       = "dev.paddock.org"       // org UUID
	LabelWorkspace = "dev.paddock.workspace" // workspace volume owner (runtime UUID)
	LabelGroup     = "dev.paddock.group"     // a group's (world's) network: the group's id
	// LabelProvider names the provider that made the compute, so that two
	// providers on one engine (docker and gvisor) each list only their own.
	LabelProvider = "dev.paddock.provider"
)

// Spec is what a sandbox is created from.
type Spec struct {
	SandboxID string // ledger row UUID
	RuntimeID string // may be empty for kind task/world
	OrgID     string
	Instance  string // installation id (LabelInstance)
	Image     string
	Resources Resources
	// Workspace is the name of a persistent volume mounted at
	// WorkspacePath. The provider creates it if it does not exist and
	// never deletes it in Destroy.
	Workspace string
	Network   NetworkPolicy
	// TrustedCA is a CA certificate (PEM) the sandbox's processes trust
	// beside the image's own roots (the egress proxy's, which brokered
	// secrets need); nil: none.
	TrustedCA []byte
	// WritableRoot gives the sandbox a writable root filesystem (kept by
	// pause and snapshots, gone when the sandbox is destroyed) and what a
	// package manager needs to install into it; otherwise it is read-only.
	WritableRoot bool
	// User is the account the sandbox's processes run as and its files
	// are written as unless a call names another: UserDefault ("user",
	// uid 1000, the default when empty) or UserRoot. A provider that runs
	// the agent as someone else (ssh) runs everything as that identity.
	User   string
	Env    map[string]string
	Labels map[string]string // extra labels; the standard ones are added by the provider
	// Group, when set, puts the sandbox on the private network of the
	// group of that id (a world's), made with Grouper.CreateGroup, and on
	// no other: the group's other sandboxes reach it by GroupName.
	Group     string
	GroupName string
}

// WorkspacePath is where the workspace volume is mounted in every sandbox.
const WorkspacePath = "/workspace"

// The sandbox's accounts (Spec.User): the unprivileged default, and root.
const (
	UserDefault = "user"
	UserRoot    = "root"
	// UserHome is UserDefault's home, where container providers mount the
	// workspace too.
	UserHome = "/home/user"
	// UserUID and UserGID are UserDefault's ids.
	UserUID = 1000
	UserGID = 1000
)

// Resources bound a sandbox.
type Resources struct {
	CPUMillis int64 // 1000 = one core
	MemoryMB  int64
	// PidsLimit bounds the sandbox's processes and threads, the agent's
	// aside: a provider whose limit counts the agent's threads too adds
	// agentpb.AgentThreads to it.
	PidsLimit int64
	// DiskMB is the workspace's disk quota, fixed when the workspace is
	// created: writes past it fail with ENOSPC. 0 = provider default.
	DiskMB int64
	TmpMB  int64 // size of the memory-backed /tmp; 0 = provider default
}

// NetworkPolicy is a sandbox's egress policy.
type NetworkPolicy string

const (
	NetworkNone  NetworkPolicy = "none"
	NetworkProxy NetworkPolicy = "proxy"
	NetworkOpen  NetworkPolicy = "open"
)

// Handle identifies created compute.
type Handle struct {
	Provider string // provider name
	ID       string // provider's sandbox id
	// State is opaque recovery state, owned by the provider and persisted
	// by the store. Providers version its encoding.
	State []byte
}

// State is the observed state of compute.
type State string

const (
	StateRunning State = "running"
	StatePaused  State = "paused"
	StateStopped State = "stopped" // exited or never started; exists but is not running
)

// Status is what Inspect observes.
type Status struct {
	State     State
	StartedAt time.Time
	ExitCode  int
	Error     string // provider-reported failure, if any
}

// Capabilities declares what a provider offers, for GET /api/capabilities
// and for callers choosing a code path.
type Capabilities struct {
	Isolation string          `json:"isolation"` // "container", "gvisor", "vm", "host"
	Pause     bool            `json:"pause"`
	Agent     bool            `json:"agent"` // DialAgent reaches paddock-shim
	Networks  []NetworkPolicy `json:"networks"`
	Snapshot  bool            `json:"snapshot"`
	// WritableRoot: the provider can give a sandbox a writable root
	// filesystem (Spec.WritableRoot) within its disk quota, or the
	// operator allowed an unbounded one.
	WritableRoot bool `json:"writable_root"`
	// GPUs are the host's GPUs by name, one entry each, as far as the
	// provider knows them (the ssh provider asks nvidia-smi); empty: none.
	GPUs []string `json:"gpus,omitempty"`
}

// Relabeler is implemented by providers that can change the labels of
// compute that exists (a Pod's; a Docker container's are fixed): a warm
// sandbox claimed for a runtime then carries that runtime's and org's
// labels, so reconciliation after a crash finds its owner. labels are set
// over the compute's own; the standard ones of StandardLabels are the
// caller's to give.
type Relabeler interface {
	Relabel(ctx context.Context, h Handle, labels map[string]string) error
}
