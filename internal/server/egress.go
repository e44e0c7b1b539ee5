package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/store"
)

// egressGate is the egress proxy of a server and what sandboxes need to
// use it.
type egressGate struct {
	st store.Store
	// providers say which address each sandbox sends from (bound).
	providers *provider.Registry
	bound     *boundAddrs
	addr      netip.AddrPort // where the proxy listens: the proxy network's gateway
	key       []byte         // signs each sandbox's proxy credentials
	proxy     *egress.Proxy
	rec       *recorder
	ca        *egress.CA
	// revoke takes back the firewall ACCEPTs that let the sandboxes reach
	// the proxy.
	revoke []func()
}

// trustedCA is the CA proxy sandboxes trust, for brokered secrets.
func (g *egressGate) trustedCA() []byte {
	if g == nil {
		return nil
	}
	return g.ca.CertPEM()
}

// metaEgressKey is the store key of the proxy credential key.
const metaEgressKey = "egress_credential_key"

// newGuard is the installation's egress guard: it closes internal
// addresses but those egress.allow_internal opens. The proxy applies it,
// and the runtimes' rules are checked against it.
func newGuard(cfg config.Config) (*egress.Guard, error) {
	open, err := cfg.Egress.AllowInternalPrefixes()
	if err != nil {
		return nil, err
	}
	return egress.NewGuard(egress.GuardConfig{AllowInternal: open}), nil
}

// startEgress sets up the egress networks and starts the proxy on the
// proxy network's gateway; the guard closes the networks' subnets. It
// returns nil, and the proxy and open modes are not offered, when egress is
// disabled or the provider has no networks.
func startEgress(ctx context.Context, cfg config.Config, st store.Store, providers *provider.Registry, guard *egress.Guard, brokers func(ctx context.Context, orgID string, secretIDs []string, host string) ([]egress.Brokered, error), logger *slog.Logger) (*egressGate, error) {
	if cfg.Egress.Disabled {
		return nil, nil
	}
	// Every provider with networks sets them up (docker providers on one
	// engine share them); the proxy listens on their gateway.
	var addr netip.AddrPort
	var networkers []provider.Networker
	for _, name := range providers.Names() {
		p, err := providers.Get(name)
		if err != nil {
			continue
		}
		nw, ok := p.(provider.Networker)
		if !ok {
			continue
		}
		a, err := nw.SetupNetworks(ctx)
		if e, ok := errdefs.Public(err); ok && (e.Code == docker.CodeNetworkForeign || e.Code == docker.CodeFirewallFailed) {
			return nil, &fatalError{fmt.Errorf("egress networks of provider %s: %w", name, err)}
		}
		if err != nil {
			return nil, fmt.Errorf("egress networks of provider %s: %w (set egress.disabled to run without the proxy and open modes)", name, err)
		}
		if !addr.IsValid() {
			addr = a
		}
		if na, ok := p.(provider.NetworkAddresser); ok {
			subnets, err := na.NetworkSubnets(ctx)
			if err != nil {
				return nil, fmt.Errorf("egress networks of provider %s: %w", name, err)
			}
			guard.AddNetworks(subnets...)
		}
		networkers = append(networkers, nw)
	}
	if !addr.IsValid() {
		return nil, nil
	}
	key, err := egressKey(ctx, st)
	if err != nil {
		return nil, err
	}
	hosts, err := cfg.Egress.HostAddrs()
	if err != nil {
		return nil, err
	}
	ca, err := egress.LoadOrCreateCA(filepath.Join(cfg.DataDir, "egress"))
	if err != nil {
		return nil, err
	}
	roots, err := upstreamRoots(cfg.Egress.UpstreamCAFile)
	if err != nil {
		return nil, err
	}
	g := &egressGate{st: st, providers: providers, bound: newBoundAddrs(), addr: addr, key: key, ca: ca}
	g.rec = newRecorder(st, cfg.Egress.Retention, logger)
	proxy, err := egress.New(egress.Config{
		Authenticate: g.authenticate,
		Policy:       g.policy,
		Brokers: func(ctx context.Context, id egress.Identity, host string) ([]egress.Brokered, error) {
			return brokers(ctx, id.OrgID, id.SecretIDs, host)
		},
		Record:        g.rec.record,
		Hosts:         hosts,
		Guard:         guard,
		CA:            ca,
		UpstreamRoots: roots,
		BrokerPorts:   cfg.Egress.BrokerPorts,
		Logger:        logger.With("component", "egress"),
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp4", addr.String())
	if err != nil {
		g.rec.close()
		hint := inUseHint(err, "egress.proxy_port / PADDOCK_EGRESS_PROXY_PORT, or egress.disabled")
		return nil, &fatalError{fmt.Errorf("egress proxy port %s: %w%s", addr, err, hint)}
	}
	g.proxy = proxy
	// The firewall lets the sandboxes through only now that the proxy
	// holds the port: never to a program that holds it instead.
	for _, nw := range networkers {
		revoke, err := nw.AllowProxy(ctx)
		if err != nil {
			_ = l.Close()
			g.close()
			return nil, &fatalError{fmt.Errorf("egress proxy firewall: %w", err)}
		}
		g.revoke = append(g.revoke, revoke)
	}
	go func() {
		if err := proxy.Serve(l); err != nil {
			logger.Error("egress proxy stopped", "err", err)
		}
	}()
	logger.Info("egress proxy", "addr", addr.String())
	return g, nil
}

// close stops the proxy and flushes the decisions it recorded.
func (g *egressGate) close() {
	if g == nil {
		return
	}
	for _, revoke := range g.revoke {
		revoke()
	}
	if g.proxy != nil {
		_ = g.proxy.Close()
	}
	g.rec.close()
}

// egressKey returns the installation's proxy credential key, made on
// first use.
func egressKey(ctx context.Context, st store.Store) ([]byte, error) {
	v, err := st.GetMeta(ctx, metaEgressKey)
	if err == nil {
		return hex.DecodeString(v)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := st.SetMeta(ctx, metaEgressKey, hex.EncodeToString(b)); err != nil {
		return nil, err
	}
	// Two servers starting at once: keep whichever was stored.
	v, err = st.GetMeta(ctx, metaEgressKey)
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(v)
}

// credential is a sandbox's proxy password: it proves the sandbox id.
func (g *egressGate) credential(sandboxID string) string {
	m := hmac.New(sha256.New, g.key)
	m.Write([]byte("paddock egress v1\x00" + sandboxID))
	return hex.EncodeToString(m.Sum(nil))
}

var errBadCredential = errors.New("bad proxy credentials")

// authenticate checks a sandbox's proxy credentials, and that they come
// from that sandbox's own address: credentials copied out of one sandbox
// are no use from another.
func (g *egressGate) authenticate(ctx context.Context, user, pass string, from netip.Addr) (egress.Identity, error) {
	if subtle.ConstantTimeCompare([]byte(pass), []byte(g.credential(user))) != 1 {
		return egress.Identity{}, errBadCredential
	}
	sb, err := g.st.GetSandbox(ctx, user)
	if err != nil || sb.State == store.SandboxKilled || sb.Network != egress.ModeProxy {
		g.bound.forget(user)
		return egress.Identity{}, errBadCredential
	}
	if !g.bound.holds(ctx, sb, from, g.sandboxAddrs) {
		return egress.Identity{}, errBadCredential
	}
	return egress.Identity{OrgID: sb.OrgID, WorkspaceID: sb.WorkspaceID, RuntimeID: sb.RuntimeID, SandboxID: sb.ID, SecretIDs: sb.SecretIDs}, nil
}

// policy reads the runtime's rules at every request: a changed policy
// applies at once.
func (g *egressGate) policy(ctx context.Context, id egress.Identity) (egress.Policy, error) {
	rt, err := g.st.GetRuntime(ctx, id.RuntimeID)
	if err != nil {
		return egress.Policy{}, err
	}
	return egress.ParsePolicy(rt.Config.Network.Allow, rt.Config.Network.Deny)
}

// env is what a proxy sandbox's processes need to use the proxy.
func (g *egressGate) env(sb store.Sandbox) map[string]string {
	if g == nil || sb.Network != egress.ModeProxy {
		return nil
	}
	u := fmt.Sprintf("http://%s:%s@%s", sb.ID, g.credential(sb.ID), g.addr)
	noProxy := "localhost,127.0.0.1,::1"
	return map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "http_proxy": u, "https_proxy": u,
		"NO_PROXY": noProxy, "no_proxy": noProxy,
	}
}

// upstreamRoots are the system's roots plus those in file.
func upstreamRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("egress upstream CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("egress upstream CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}

// recorder writes the proxy's decisions to the store in batches, off the
// requests' path, and prunes old ones. It says how far the log is written
// (waitRecorded), for a turn that reads what the proxy decided during it.
type recorder struct {
	st        store.Store
	retention time.Duration
	logger    *slog.Logger
	in        chan store.EgressDecision
	// flush asks the writer to write what is buffered now.
	flush chan struct{}
	done  chan struct{}

	mu     sync.RWMutex
	closed bool

	// through: every decision recorded before it is written (or was
	// dropped); written is closed and replaced when it moves.
	progress sync.Mutex
	through  time.Time
	written  chan struct{}
}

// recorderBuffer is how many decisions may wait to be written; beyond it
// they are dropped and counted in the log.
const recorderBuffer = 8192

func newRecorder(st store.Store, retention time.Duration, logger *slog.Logger) *recorder {
	r := &recorder{
		st: st, retention: retention, logger: logger, in: make(chan store.EgressDecision, recorderBuffer),
		flush: make(chan struct{}, 1), done: make(chan struct{}), written: make(chan struct{}),
	}
	go r.run()
	return r
}

func (r *recorder) record(d egress.Decision) {
	row := store.EgressDecision{
		ID: uuid.NewString(), OrgID: d.OrgID, WorkspaceID: d.WorkspaceID, RuntimeID: d.RuntimeID, SandboxID: d.SandboxID,
		At: d.At, Allowed: d.Allowed, Reason: d.Reason, Refusal: string(d.Refusal), Method: d.Method, Host: d.Host, Port: d.Port,
		Addr: d.Addr, BytesUp: d.BytesUp, BytesDown: d.BytesDown, Duration: d.Duration, Brokered: d.Brokered,
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return
	}
	select {
	case r.in <- row:
	default:
		r.logger.Warn("egress decision dropped: the recorder is behind", "runtime", d.RuntimeID, "host", d.Host)
	}
}

// waitRecorded returns once every decision recorded before t is in the
// store (or was dropped), or when ctx ends or the recorder stops first.
func (r *recorder) waitRecorded(ctx context.Context, t time.Time) error {
	for {
		r.progress.Lock()
		through, written := r.through, r.written
		r.progress.Unlock()
		if !through.Before(t) {
			return nil
		}
		select {
		case r.flush <- struct{}{}:
		default:
		}
		select {
		case <-written:
		case <-r.done:
			return errors.New("the egress recorder has stopped")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *recorder) run() {
	defer close(r.done)
	flush := time.NewTicker(250 * time.Millisecond)
	defer flush.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	var batch []store.EgressDecision
	// write takes everything buffered (all that was recorded before it
	// began) and writes it with the batch.
	write := func() {
		mark := time.Now()
		for drained := false; !drained; {
			select {
			case d, ok := <-r.in:
				if !ok {
					drained = true
					break
				}
				batch = append(batch, d)
			default:
				drained = true
			}
		}
		if len(batch) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := r.st.RecordEgress(ctx, batch); err != nil {
				r.logger.Error("recording egress decisions", "n", len(batch), "err", err)
			}
			cancel()
			batch = batch[:0]
		}
		r.progress.Lock()
		r.through = mark
		close(r.written)
		r.written = make(chan struct{})
		r.progress.Unlock()
	}
	for {
		select {
		case d, ok := <-r.in:
			if !ok {
				write()
				return
			}
			batch = append(batch, d)
			if len(batch) >= 256 {
				write()
			}
		case <-flush.C:
			write()
		case <-r.flush:
			write()
		case <-prune.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if _, err := r.st.PruneEgress(ctx, time.Now().Add(-r.retention)); err != nil {
				r.logger.Warn("pruning egress decisions", "err", err)
			}
			cancel()
		}
	}
}

// close writes what is buffered and stops.
func (r *recorder) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.in)
	}
	r.mu.Unlock()
	<-r.done
}

// recorded returns a function that waits until the egress log holds
// every decision the proxy made before t; nil when there is no proxy.
func (g *egressGate) recorded() func(ctx context.Context, t time.Time) error {
	if g == nil {
		return nil
	}
	return g.rec.waitRecorded
}

// fatalError is an egress failure the server must not start with: the
// networks are up and the modes offered, but the proxy cannot serve.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }
