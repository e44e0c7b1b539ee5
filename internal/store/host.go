package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Hosts
//
// Vocabulary:
//
//   - Host: a machine an org brought (`paddock host add`), reached over
//     SSH. It backs an ssh provider that only its org's runtimes use,
//     named HostProviderPrefix + its id in the provider registry; the
//     org names it by Name.
// ---------------------------------------------------------------------------

// HostProviderPrefix starts the registry name of a host's provider.
const HostProviderPrefix = "host-"

// Host is one registered machine.
type Host struct {
	ID    string
	OrgID string
	// Name is what the org calls it (unique in the org), and what a
	// runtime names as its provider.
	Name string
	// Address is sshd's host:port; User the account logged in as.
	Address string
	User    string
	// HostKey pins the machine's host key, one line as authorized_keys
	// writes it.
	HostKey string
	// KeyID and SealedKey are the private key, sealed under the secrets
	// key KeyID and bound to the row (never returned by the API).
	KeyID     string
	SealedKey []byte
	// DockerSocket, RunDir and DiskDir are paths on the machine.
	DockerSocket string
	RunDir       string
	DiskDir      string
	// IdleTeardown is how long it may go with no sandbox running before
	// paddock tears it down (0: never); TeardownCommand runs on it over
	// SSH then (a rented machine powering itself off).
	IdleTeardown    time.Duration
	TeardownCommand string
	// CostPerHourMicros is what each sandbox on it is billed per hour, in
	// place of the resource rate (0: the resource rate).
	CostPerHourMicros int64
	// Mode is how its sandboxes run: HostContainer ("" too) as containers
	// of its Docker engine, HostBare as the agent in namespaces of its own
	// on a machine with sshd only.
	Mode HostMode
	// State is HostReady, or HostTornDown once torn down until a sandbox
	// runs on it again; LastUsedAt is when one last ran there (its
	// registration, before any).
	State      HostState
	LastUsedAt time.Time
	// CreatedBy is the principal that registered it.
	CreatedBy string
	CreatedAt time.Time
}

// HostState says whether a host is torn down.
type HostState string

// The states of a host.
const (
	HostReady    HostState = "ready"
	HostTornDown HostState = "torn_down"
)

// HostMode is how a host's sandboxes run.
type HostMode string

// The modes of a host (the ssh provider's ModeContainer and ModeBare).
const (
	HostContainer HostMode = "container"
	HostBare      HostMode = "bare"
)

// OrDefault is m, or HostContainer when m is empty.
func (m HostMode) OrDefault() HostMode {
	if m == "" {
		return HostContainer
	}
	return m
}

// ProviderName is the registry name of h's provider.
func (h Host) ProviderName() string { return HostProviderPrefix + h.ID }

// HostQueries keep registered hosts.
type HostQueries interface {
	// CreateHost inserts h; a name taken in its org is ErrConflict with
	// the code host_exists.
	CreateHost(ctx context.Context, h Host) error
	GetHost(ctx context.Context, id string) (Host, error)
	GetHostByName(ctx context.Context, orgID, name string) (Host, error)
	// ListHosts lists an org's hosts, oldest first.
	ListHosts(ctx context.Context, orgID string, page Page) ([]Host, string, error)
	// ListHostsAfter lists hosts of every org by id after afterID ("" for
	// the first page), at most limit: the server's scan at start.
	ListHostsAfter(ctx context.Context, afterID string, limit int) ([]Host, error)
	// SetHostState writes the state and last use of host id.
	SetHostState(ctx context.Context, id string, state HostState, lastUsed time.Time) error
	// ClaimHostTeardown moves host id to torn_down if it is ready and
	// was last used at lastUsed, and reports whether it did: of replicas
	// tearing one machine down at once, one does.
	ClaimHostTeardown(ctx context.Context, id string, lastUsed time.Time) (bool, error)
	// SetHostSeal writes host id's private key sealed anew (a rotation of
	// the secrets key).
	SetHostSeal(ctx context.Context, id, keyID string, sealed []byte) error
	// DeleteHost deletes the record id.
	DeleteHost(ctx context.Context, id string) error
}
