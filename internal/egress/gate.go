package egress

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
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Gate is an installation's egress proxy and what its sandboxes need to
// use it: the networks the providers set up, the proxy on their gateway,
// each sandbox's credentials, the rules read from its runtime, and the
// record of what the proxy decided. A nil *Gate is egress that is off:
// its methods give nothing.
type Gate struct {
	st Store
	// providers say which address each sandbox sends from (bound).
	providers *provider.Registry
	bound     *boundAddrs
	addr      netip.AddrPort // where the proxy listens: the proxy network's gateway
	key       []byte         // signs each sandbox's proxy credentials
	proxy     *Proxy
	rec       *recorder
	ca        *CA
	// revoke takes back the firewall ACCEPTs that let the sandboxes reach
	// the proxy.
	revoke []func()
}

// Store is what the gate uses of the store: its credential key, each
// sandbox's row and runtime, and the decisions' log.
type Store interface {
	metaStore
	decisionLog
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
}

// metaStore keeps the installation's proxy credential key.
type metaStore interface {
	GetMeta(ctx context.Context, key string) (string, error)
	InitMeta(ctx context.Context, key, value string) (string, error)
}

// GateConfig configures StartGate.
type GateConfig struct {
	Store     Store
	Providers *provider.Registry
	// Guard closes internal addresses; the providers' networks are added
	// to it.
	Guard *Guard
	// Dir holds the installation's CA (made on first start).
	Dir string
	// Hosts map names to addresses before any lookup (Config.Hosts).
	Hosts map[string][]netip.AddrPort
	// UpstreamCAFile adds roots the proxy trusts upstream; "" none.
	UpstreamCAFile string
	// BrokerPorts are the ports of brokered hosts (Config.BrokerPorts).
	BrokerPorts []int
	// Retention is how long decisions are kept.
	Retention time.Duration
	// Brokers are the secrets an org's sandbox may have brokered to host.
	Brokers func(ctx context.Context, orgID string, secretIDs []string, host string) ([]Brokered, error)
	// Fatal says which errors of a provider's network setup must stop the
	// server (its networks belong to another installation, its firewall
	// fails) rather than leave it without the proxy and open modes.
	Fatal  func(error) bool
	Logger *slog.Logger
}

// FatalError is an egress failure the server must not start with: the
// networks are up and the modes offered, but the proxy cannot serve.
// Any other error of StartGate leaves the server without the proxy and
// open modes.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// metaEgressKey is the store key of the proxy credential key.
const metaEgressKey = "egress_credential_key"

// StartGate sets up the egress networks and starts the proxy on the proxy
// network's gateway; the guard closes the networks' subnets. It returns a
// nil Gate, and the proxy and open modes are not offered, when no
// provider has networks.
func StartGate(ctx context.Context, cfg GateConfig) (*Gate, error) {
	addr, networkers, err := setupNetworks(ctx, cfg)
	if err != nil || !addr.IsValid() {
		return nil, err
	}
	key, err := egressKey(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	ca, err := LoadOrCreateCA(cfg.Dir)
	if err != nil {
		return nil, err
	}
	roots, err := upstreamRoots(cfg.UpstreamCAFile)
	if err != nil {
		return nil, err
	}
	g := &Gate{st: cfg.Store, providers: cfg.Providers, bound: newBoundAddrs(), addr: addr, key: key, ca: ca}
	proxy, err := New(Config{
		Authenticate: g.authenticate,
		Policy:       g.policy,
		Brokers: func(ctx context.Context, id Identity, host string) ([]Brokered, error) {
			return cfg.Brokers(ctx, id.OrgID, id.SecretIDs, host)
		},
		Hosts:         cfg.Hosts,
		Guard:         cfg.Guard,
		CA:            ca,
		UpstreamRoots: roots,
		BrokerPorts:   cfg.BrokerPorts,
		Logger:        cfg.Logger,
		Record:        func(d Decision) { g.rec.record(d) },
	})
	if err != nil {
		return nil, err
	}
	l, err := ListenShared(ctx, addr.String())
	if err != nil {
		return nil, &FatalError{fmt.Errorf("egress proxy port %s: %w", addr, err)}
	}
	g.rec = newRecorder(cfg.Store, cfg.Retention, cfg.Logger)
	g.proxy = proxy
	// The firewall lets the sandboxes through only now that the proxy
	// holds the port: never to a program that holds it instead.
	for _, nw := range networkers {
		revoke, err := nw.AllowProxy(ctx)
		if err != nil {
			_ = l.Close()
			g.Close()
			return nil, &FatalError{fmt.Errorf("egress proxy firewall: %w", err)}
		}
		g.revoke = append(g.revoke, revoke)
	}
	go func() {
		if err := proxy.Serve(l); err != nil {
			cfg.Logger.Error("egress proxy stopped", "err", err)
		}
	}()
	cfg.Logger.Info("egress proxy", "addr", addr.String())
	return g, nil
}

// ListenShared listens on addr (TCP, IPv4) with SO_REUSEPORT: the
// replicas of an installation on one host all listen on the one proxy
// port that their sandboxes are pointed at, the kernel spreads the
// connections over them, and a replica that stops or dies leaves its
// share to the others. A program that holds the port without the option,
// or runs as another user, still makes the listen fail.
func ListenShared(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(ctx, "tcp4", addr)
}

// setupNetworks has every provider with networks set them up (docker
// providers on one engine share them) and returns the first one's
// gateway, where the proxy listens; invalid when none has networks.
func setupNetworks(ctx context.Context, cfg GateConfig) (netip.AddrPort, []provider.Networker, error) {
	var addr netip.AddrPort
	var networkers []provider.Networker
	for _, name := range cfg.Providers.Names() {
		p, err := cfg.Providers.Get(name)
		if err != nil {
			continue
		}
		nw, ok := p.(provider.Networker)
		if !ok {
			continue
		}
		a, err := nw.SetupNetworks(ctx)
		if err != nil && cfg.Fatal != nil && cfg.Fatal(err) {
			return addr, nil, &FatalError{fmt.Errorf("egress networks of provider %s: %w", name, err)}
		}
		if err != nil {
			return addr, nil, fmt.Errorf("egress networks of provider %s: %w (set egress.disabled to run without the proxy and open modes)", name, err)
		}
		if !addr.IsValid() {
			addr = a
		}
		if na, ok := p.(provider.NetworkAddresser); ok {
			subnets, err := na.NetworkSubnets(ctx)
			if err != nil {
				return addr, nil, fmt.Errorf("egress networks of provider %s: %w", name, err)
			}
			cfg.Guard.AddNetworks(subnets...)
		}
		networkers = append(networkers, nw)
	}
	return addr, networkers, nil
}

// Observe has fn told of each decision the proxy records here, with the
// id its row will have, as it is recorded (before its batch is written):
// the live event stream follows the proxy so. fn is called on the
// proxy's requests' path and must not block. A nil Gate records nothing.
func (g *Gate) Observe(fn func(store.EgressDecision)) {
	if g == nil || g.rec == nil {
		return
	}
	g.rec.observe.Store(&fn)
}

// Close stops the proxy, then takes back the firewall's ACCEPTs (kept
// while another replica's proxy listens on the port) and flushes the
// decisions it recorded.
func (g *Gate) Close() {
	if g == nil {
		return
	}
	if g.proxy != nil {
		_ = g.proxy.Close()
	}
	for _, revoke := range g.revoke {
		revoke()
	}
	if g.rec != nil {
		g.rec.close()
	}
}

// TrustedCA is the CA proxy sandboxes trust, for brokered secrets; nil
// without a gate.
func (g *Gate) TrustedCA() []byte {
	if g == nil {
		return nil
	}
	return g.ca.CertPEM()
}

// Recorded returns a function that waits until the egress log holds
// every decision the proxy made before t; nil without a gate.
func (g *Gate) Recorded() func(ctx context.Context, t time.Time) error {
	if g == nil {
		return nil
	}
	return g.rec.waitRecorded
}

// Env is what a proxy sandbox's processes need to use the proxy; nil for
// any other sandbox, or without a gate.
func (g *Gate) Env(sb store.Sandbox) map[string]string {
	if g == nil || sb.Network != ModeProxy {
		return nil
	}
	u := fmt.Sprintf("http://%s:%s@%s", sb.ID, g.credential(sb.ID), g.addr)
	noProxy := "localhost,127.0.0.1,::1"
	return map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "http_proxy": u, "https_proxy": u,
		"NO_PROXY": noProxy, "no_proxy": noProxy,
	}
}

// egressKey returns the installation's proxy credential key, made on
// first use.
func egressKey(ctx context.Context, st metaStore) ([]byte, error) {
	v, err := st.GetMeta(ctx, metaEgressKey)
	if err == nil {
		return hex.DecodeString(v)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	// Servers starting at once all keep the first one stored.
	if v, err = st.InitMeta(ctx, metaEgressKey, hex.EncodeToString(b)); err != nil {
		return nil, err
	}
	return hex.DecodeString(v)
}

// credential is a sandbox's proxy password: it proves the sandbox id.
func (g *Gate) credential(sandboxID string) string {
	m := hmac.New(sha256.New, g.key)
	m.Write([]byte("paddock egress v1\x00" + sandboxID))
	return hex.EncodeToString(m.Sum(nil))
}

var errBadCredential = errors.New("bad proxy credentials")

// authenticate checks a sandbox's proxy credentials, and that they come
// from that sandbox's own address: credentials copied out of one sandbox
// are no use from another.
func (g *Gate) authenticate(ctx context.Context, user, pass string, from netip.Addr) (Identity, error) {
	if subtle.ConstantTimeCompare([]byte(pass), []byte(g.credential(user))) != 1 {
		return Identity{}, errBadCredential
	}
	sb, err := g.st.GetSandbox(ctx, user)
	if err != nil || sb.State == store.SandboxKilled || sb.Network != ModeProxy {
		g.bound.forget(user)
		return Identity{}, errBadCredential
	}
	if !g.bound.holds(ctx, sb, from, g.sandboxAddrs) {
		return Identity{}, errBadCredential
	}
	return Identity{OrgID: sb.OrgID, WorkspaceID: sb.WorkspaceID, RuntimeID: sb.RuntimeID, SandboxID: sb.ID, SecretIDs: sb.SecretIDs}, nil
}

// policy reads the runtime's rules at every request: a changed policy
// applies at once.
func (g *Gate) policy(ctx context.Context, id Identity) (Policy, error) {
	rt, err := g.st.GetRuntime(ctx, id.RuntimeID)
	if err != nil {
		return Policy{}, err
	}
	return ParsePolicy(rt.Config.Network.Allow, rt.Config.Network.Deny)
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
