// Package server wires paddock together and runs it. Each subsystem is a
// component (internal/component) registered here, one file each: the
// store, access, providers, egress, secrets, runtime, ledger, bindings,
// sessions, lifecycle, the SSH gateway, the preview gateway, metrics and
// the HTTP API. Run opens the doors (the listeners), initialises the
// components in the order of what they require, starts them once all are
// initialised (what runs in the background, then serving), and closes
// them in reverse under one deadline when its context ends.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	_ "github.com/paddockhq/paddock/internal/store/postgres" // the "postgres" store
	_ "github.com/paddockhq/paddock/internal/store/sqlite"   // the "sqlite" store
)

// ShutdownTimeout bounds a graceful shutdown: the drain of requests and
// the close of every component.
const ShutdownTimeout = 15 * time.Second

// AgentStreamGrace is how long a shutdown lets streams to sandbox agents
// (exec, terminals, file transfers) go on before it cuts them.
const AgentStreamGrace = 5 * time.Second

// Run serves until ctx ends. It writes the address it listens on, and on the
// first start the admin API key, to out.
func Run(ctx context.Context, cfg config.Config, logger *slog.Logger, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockStart(cfg.DataDir)
	if err != nil {
		return err
	}
	// Build opens the doors first: a start that cannot have its addresses
	// (a busy port) fails before it creates anything, the admin key
	// included.
	s, err := Build(ctx, cfg, logger, out, Overrides{})
	if err != nil {
		unlock()
		return err
	}
	serveErr := s.serve(ctx, unlock)
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	return errors.Join(serveErr, s.Close(sctx))
}

// wiring is what the components of one run share: the configuration, the
// logger, where the server prints, the doors, and the API features the
// components mount.
type wiring struct {
	// sections are the configuration, each component's part its own:
	// the registry gives each Init its section (config.Config.Section).
	sections func(name string) any
	// dataDir is the server's data directory, a setting of the whole
	// server: the store component reads it and its instance (the
	// installation) hands it to the others.
	dataDir string
	// replica is this server's id among the replicas of its store, and
	// leaseTTL how long its leases last unrenewed (0: lease.DefaultTTL):
	// the store component makes the leases of the replica with them.
	replica  string
	leaseTTL time.Duration
	// egress is the egress section as the providers component reads
	// it: the docker provider's networks are named there, and the egress
	// component, which owns the section, requires the providers.
	egress config.Egress
	logger *slog.Logger
	out    io.Writer
	doors  *doors
	// o are what a test gives in place of what the configuration makes.
	o Overrides
	// now is the clock of the services and the API.
	now func() time.Time
	// features are the API's features, mounted by the components that
	// provide them as they initialise; the HTTP component serves them.
	features []api.Feature
}

// mount is how a component mounts its routes: its feature joins the API
// the HTTP component serves. A component that is not configured mounts
// nothing, so its routes do not exist.
func (w *wiring) mount(f api.Feature) { w.features = append(w.features, f) }

// The components' names.
const (
	storeName        = "store"
	accessName       = "access"
	metricsName      = "metrics"
	providersName    = "providers"
	secretsName      = "secrets"
	egressName       = "egress"
	runtimeName      = "runtime"
	ledgerName       = "ledger"
	bindingsName     = "bindings"
	sessionsName     = "sessions"
	tasksName        = "tasks"
	worldsName       = "worlds"
	snapshotsName    = "snapshots"
	workflowsName    = "workflows"
	buildsName       = "template_builds"
	hostsName        = "hosts"
	hostTeardownName = "host-teardown"
	lifecycleName    = "lifecycle"
	sshName          = "ssh"
	previewName      = "preview"
	eventsName       = "events"
	instanceName     = "instance"
	httpName         = "http"
)

// components are paddock's subsystems. Their order is the order they
// initialise in where what they require leaves it open.
func (w *wiring) components() []component.Registration {
	return []component.Registration{
		w.storeComponent(),
		w.accessComponent(),
		w.metricsComponent(),
		w.providersComponent(),
		w.secretsComponent(),
		w.hostsComponent(),
		w.egressComponent(),
		w.runtimeComponent(),
		w.ledgerComponent(),
		w.bindingsComponent(),
		w.sessionsComponent(),
		w.snapshotsComponent(),
		w.tasksComponent(),
		w.worldsComponent(),
		w.workflowsComponent(),
		w.templateBuildsComponent(),
		w.hostTeardownComponent(),
		w.lifecycleComponent(),
		w.sshComponent(),
		w.previewComponent(),
		w.eventsComponent(),
		w.instanceComponent(),
		w.httpComponent(),
	}
}

// inUseHint is what a start that could not have an address tells the
// user: the setting to change, when another process (another installation)
// holds it.
func inUseHint(err error, setting string) string {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return ""
	}
	return " (another installation?): set " + setting
}
