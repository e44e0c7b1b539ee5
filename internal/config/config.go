// Package config is the server's configuration: defaults, a YAML file,
// environment variables and flags, applied in that order (a flag beats the
// environment, which beats the file, which beats the default).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/paddockhq/paddock/internal/clientaddr"
)

// The egress networks every installation used before their names were
// derived from the instance id.
const (
	EarlierProxyNetwork = "paddock-egress"
	EarlierOpenNetwork  = "paddock-open"
)

// DefaultSSHListen is where the SSH gateway listens unless ssh_listen
// says otherwise.
const DefaultSSHListen = "127.0.0.1:2222"

var instanceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// Config is what `paddock serve` runs with.
type Config struct {
	Listen  string `yaml:"listen"`   // PADDOCK_LISTEN
	DataDir string `yaml:"data_dir"` // PADDOCK_DATA_DIR
	// Provider is the default provider's name: one of Providers, or,
	// when Providers is empty, the kind of the only provider (docker or
	// fake), named after it.
	Provider string `yaml:"provider"` // PADDOCK_PROVIDER
	// Providers are the providers this installation offers, by name; a
	// runtime picks one (runtime.provider), else gets Provider.
	Providers []ProviderConfig `yaml:"providers"` // PADDOCK_PROVIDERS: name=kind[:runtime],…
	// Store names the store: "sqlite:<path>" (or a bare path); "" means
	// <data-dir>/paddock.db.
	Store        string `yaml:"store"`         // PADDOCK_STORE
	ShimPath     string `yaml:"shim_path"`     // PADDOCK_SHIM_PATH
	DefaultImage string `yaml:"default_image"` // PADDOCK_DEFAULT_IMAGE
	// DefaultHarness is the agent harness prompts and tasks run when they
	// name none ("" is claude-code).
	DefaultHarness string        `yaml:"default_harness"` // PADDOCK_DEFAULT_HARNESS
	DockerHost     string        `yaml:"docker_host"`     // PADDOCK_DOCKER_HOST (else DOCKER_HOST)
	RunDir         string        `yaml:"run_dir"`         // PADDOCK_RUN_DIR: agent socket dirs
	BootstrapKey   string        `yaml:"bootstrap_key"`   // PADDOCK_BOOTSTRAP_KEY: first admin key
	LogLevel       string        `yaml:"log_level"`       // PADDOCK_LOG_LEVEL: debug | info | warn | error
	LogFormat      string        `yaml:"log_format"`      // PADDOCK_LOG_FORMAT: json | text
	IdleTimeout    time.Duration `yaml:"idle_timeout"`    // PADDOCK_IDLE_TIMEOUT
	PullImages     bool          `yaml:"pull_images"`     // PADDOCK_PULL_IMAGES: pull missing images
	// ImageBuilder is a script (scripts/build-images.sh) with which the
	// server builds ImageBuilds in the background once it serves, one
	// after another, saying how far each is in GET /api/images; "" builds
	// nothing.
	ImageBuilder string   `yaml:"image_builder"` // PADDOCK_IMAGE_BUILDER
	ImageBuilds  []string `yaml:"image_builds"`  // PADDOCK_IMAGE_BUILDS: the builder's targets, comma-separated
	// WritableRootUnbounded allows runtimes a writable root on a Docker
	// engine that cannot bound its size (only overlay2 over xfs with
	// project quotas can): such a root's writes are outside any quota.
	WritableRootUnbounded bool `yaml:"writable_root_unbounded"` // PADDOCK_WRITABLE_ROOT_UNBOUNDED
	// AllowedImages are the images a runtime may name: exact references,
	// or prefixes ending in '*'. The default image is always allowed.
	// Snapshots (paddock/archive) never are; only their own runtime
	// restores them.
	AllowedImages []string `yaml:"allowed_images"` // PADDOCK_ALLOWED_IMAGES: comma-separated
	// DiskMB is a workspace's disk quota when its runtime names none;
	// MaxDiskMB is the most a runtime may ask for.
	DiskMB    int64 `yaml:"disk_mb"`     // PADDOCK_DISK_MB
	MaxDiskMB int64 `yaml:"max_disk_mb"` // PADDOCK_MAX_DISK_MB
	// InstanceID names the installation on its first start (it labels all
	// compute); "" means a random UUID. Later starts keep the stored one.
	InstanceID string `yaml:"instance_id"` // PADDOCK_INSTANCE_ID

	// Credits: what compute costs, in micro-credits per second of one core
	// and of one GiB of memory, with per-provider overrides written
	// "name=cpu:memory,…"; how much of it a start prepays; how often
	// running compute is charged; how many credits a new org starts with.
	// Zero rates make compute free.
	CreditRateCPU       int64         `yaml:"credit_rate_cpu"`       // PADDOCK_CREDIT_RATE_CPU
	CreditRateMemory    int64         `yaml:"credit_rate_memory"`    // PADDOCK_CREDIT_RATE_MEMORY
	CreditProviderRates string        `yaml:"credit_provider_rates"` // PADDOCK_CREDIT_PROVIDER_RATES
	CreditFirstSlice    time.Duration `yaml:"credit_first_slice"`    // PADDOCK_CREDIT_FIRST_SLICE
	SettleInterval      time.Duration `yaml:"settle_interval"`       // PADDOCK_SETTLE_INTERVAL
	NewOrgCredits       float64       `yaml:"new_org_credits"`       // PADDOCK_NEW_ORG_CREDITS

	// Lifecycle: the longest one keepalive may extend a sandbox's
	// window; how long a runtime may stay paused before it is archived
	// (0: never); how many warm sandboxes to keep for runtimes of the
	// default template, and pools for other templates (file only).
	MaxKeepalive time.Duration `yaml:"max_keepalive"` // PADDOCK_MAX_KEEPALIVE
	ArchiveAfter time.Duration `yaml:"archive_after"` // PADDOCK_ARCHIVE_AFTER
	WarmPool     int           `yaml:"warm_pool"`     // PADDOCK_WARM_POOL
	// WarmPoolRunning keeps the default template's warm sandboxes running
	// with their agent link open (a claim is a transaction and nothing
	// else) instead of paused (which holds no CPU and less memory).
	WarmPoolRunning bool       `yaml:"warm_pool_running"` // PADDOCK_WARM_POOL_RUNNING
	WarmPools       []WarmPool `yaml:"warm_pools"`
	// ReconcileConcurrency is how many runtimes a reconciliation handles
	// at once; 0 means 8.
	ReconcileConcurrency int `yaml:"reconcile_concurrency"` // PADDOCK_RECONCILE_CONCURRENCY

	// Egress: the proxy and open network modes (docker provider).
	Egress Egress `yaml:"egress"`

	// Wallet sign-in: how long a challenge may be answered, and how long
	// a session lasts (0: 5m and 24h). SessionKey, when set, seals session
	// tokens (base64 of 32 bytes); otherwise <data-dir>/session.key, made
	// on first start. Like SecretsKey it is read from the environment only.
	// SignInDomain names the server in the message a wallet signs, as
	// users reach it (host:port); "" means the listen address, with
	// "localhost" for an unspecified host.
	SignInDomain string        `yaml:"sign_in_domain"` // PADDOCK_SIGN_IN_DOMAIN
	ChallengeTTL time.Duration `yaml:"challenge_ttl"`  // PADDOCK_CHALLENGE_TTL
	SessionTTL   time.Duration `yaml:"session_ttl"`    // PADDOCK_SESSION_TTL
	SessionKey   string        `yaml:"-"`              // PADDOCK_SESSION_KEY

	// Limits: rate limits, caps on concurrent sessions, body sizes.
	Limits Limits `yaml:"limits"`
	// TrustedProxies are the reverse proxies in front of the server, as
	// CIDRs or addresses: only from them is TrustedProxyHeader believed
	// to name the client, for the per-address rate limit and the logs.
	// None (the default): the connection's peer is the client.
	TrustedProxies []string `yaml:"trusted_proxies"` // PADDOCK_TRUSTED_PROXIES: comma-separated
	// TrustedProxyHeader is the one header those proxies write the
	// client in: X-Forwarded-For (the default), Forwarded or X-Real-IP.
	// The others are the client's own and are never read.
	TrustedProxyHeader string `yaml:"trusted_proxy_header"` // PADDOCK_TRUSTED_PROXY_HEADER

	// Members: how org admins add members.
	Members Members `yaml:"members"`

	// SSH gateway: SSHListen is its address; "" means DefaultSSHListen,
	// and "off" turns it off. A busy port fails the start (two
	// installations on one host need two SSH ports).
	// SSHAddress is host:port as users reach it, when not the listen
	// address.
	SSHListen  string `yaml:"ssh_listen"`  // PADDOCK_SSH_LISTEN
	SSHAddress string `yaml:"ssh_address"` // PADDOCK_SSH_ADDRESS

	// PreviewDomain is the domain of preview URLs: port P of a runtime is
	// P-<runtime short id>.<PreviewDomain>. "" means localhost, which
	// browsers resolve to loopback by themselves; elsewhere point a
	// wildcard DNS record at the server.
	PreviewDomain string `yaml:"preview_domain"` // PADDOCK_PREVIEW_DOMAIN
	// PreviewScheme and PreviewPort are how users reach preview URLs when
	// a proxy in front terminates TLS or listens elsewhere: "https" and
	// "443" say so ("" means http and the listen port; "none" omits the
	// port).
	PreviewScheme string `yaml:"preview_scheme"` // PADDOCK_PREVIEW_SCHEME
	PreviewPort   string `yaml:"preview_port"`   // PADDOCK_PREVIEW_PORT
	// SecretsKey, when set, is the key secrets are sealed with (base64 of
	// 32 bytes); otherwise <data-dir>/secrets.key, made on first start. It
	// is read from the environment only, never from a file or a flag.
	SecretsKey string `yaml:"-"` // PADDOCK_SECRETS_KEY
}

// Limits protect the server from any one caller; zero fields take the
// defaults, and a negative rate or cap turns it off.
type Limits struct {
	// Token buckets, in requests a second and a burst: one per credential
	// and one per client address. Over either: 429 with Retry-After.
	RatePerKey     float64 `yaml:"rate_per_key"`     // PADDOCK_RATE_PER_KEY (100)
	BurstPerKey    int     `yaml:"burst_per_key"`    // PADDOCK_BURST_PER_KEY (500)
	RatePerClient  float64 `yaml:"rate_per_client"`  // PADDOCK_RATE_PER_CLIENT (200)
	BurstPerClient int     `yaml:"burst_per_client"` // PADDOCK_BURST_PER_CLIENT (1000)
	// Concurrent exec streams and terminals, per runtime and per user.
	ExecStreamsPerRuntime int `yaml:"exec_streams_per_runtime"` // PADDOCK_EXEC_STREAMS_PER_RUNTIME (32)
	ExecStreamsPerUser    int `yaml:"exec_streams_per_user"`    // PADDOCK_EXEC_STREAMS_PER_USER (64)
	TerminalsPerRuntime   int `yaml:"terminals_per_runtime"`    // PADDOCK_TERMINALS_PER_RUNTIME (8)
	TerminalsPerUser      int `yaml:"terminals_per_user"`       // PADDOCK_TERMINALS_PER_USER (16)
	// Request bodies: JSON, file uploads, capability bundles.
	JSONBodyBytes   int64 `yaml:"json_body_bytes"`   // PADDOCK_JSON_BODY_BYTES (1 MiB)
	UploadBodyBytes int64 `yaml:"upload_body_bytes"` // PADDOCK_UPLOAD_BODY_BYTES (1 GiB)
	BundleBodyBytes int64 `yaml:"bundle_body_bytes"` // PADDOCK_BUNDLE_BODY_BYTES (16 MiB)
}

// Members says how org admins add members. By default an org admin's add
// is an invitation that the user holding the address accepts.
type Members struct {
	// DirectAdd lets org admins add existing users at once, without their
	// consent, for installations of a single team. Only the installation
	// admin ever makes users: an address no user has is still an
	// invitation. So with it on, an add answers 201 for an existing user
	// and 202 for an unknown address, and tells an org's admins which
	// addresses have users.
	DirectAdd bool `yaml:"direct_add"` // PADDOCK_MEMBERS_DIRECT_ADD
	// InvitationTTL is how long an invitation stays open; 0 means 7 days.
	InvitationTTL time.Duration `yaml:"invitation_ttl"` // PADDOCK_MEMBERS_INVITATION_TTL
}

// Egress configures the egress proxy and the networks of the proxy and open
// modes.
type Egress struct {
	// Disabled offers only the none mode: no networks, no firewall rules,
	// no proxy.
	Disabled bool `yaml:"disabled"` // PADDOCK_EGRESS_DISABLED
	// ProxyNetwork and OpenNetwork name the Docker networks of the two
	// modes; they are created on start. "" (the default) names them after
	// the instance id, paddock-egress-<hash> and paddock-open-<hash>, so
	// each installation on a host has its own (one that has the networks
	// of earlier releases, EarlierProxyNetwork and EarlierOpenNetwork,
	// keeps them).
	ProxyNetwork string `yaml:"proxy_network"` // PADDOCK_EGRESS_PROXY_NETWORK
	OpenNetwork  string `yaml:"open_network"`  // PADDOCK_EGRESS_OPEN_NETWORK
	// ProxyPort is the egress proxy's port on the proxy network's gateway.
	ProxyPort int `yaml:"proxy_port"` // PADDOCK_EGRESS_PROXY_PORT
	// Hosts maps names to addresses for the proxy, before any lookup:
	// for air-gapped installs (a local package mirror) and tests. Each
	// address is addr or addr:port ([v6]:port); the proxy opens it, even
	// private or loopback, for that name on that port only, or on 80 and
	// 443 when no port is given. Repeat an entry for more ports.
	Hosts map[string][]string `yaml:"hosts"` // PADDOCK_EGRESS_HOSTS: name=addr:port,name=addr
	// AllowInternal are the internal addresses and ranges (private,
	// link-local, …) that proxy sandboxes may reach: the egress guard
	// closes them otherwise, and a runtime's allow rule may name them only
	// once they are listed here. It never opens loopback, the host's own
	// addresses, its bridges' networks or the installation's networks.
	AllowInternal []string `yaml:"allow_internal"` // PADDOCK_EGRESS_ALLOW_INTERNAL: 10.20.0.0/16,192.168.1.5
	// BrokerPorts are the ports on which tunnels to hosts of brokered
	// secrets are intercepted; default 443.
	BrokerPorts []int `yaml:"broker_ports"` // PADDOCK_EGRESS_BROKER_PORTS: 443,8443
	// UpstreamCAFile holds extra CA certificates (PEM) the proxy trusts
	// when it calls brokered hosts itself.
	UpstreamCAFile string `yaml:"upstream_ca_file"` // PADDOCK_EGRESS_UPSTREAM_CA_FILE
	// Retention is how long egress decisions are kept.
	Retention time.Duration `yaml:"retention"` // PADDOCK_EGRESS_RETENTION
}

// HostAddrs reads Hosts: each name's addresses, with the port each one is
// opened on (0: 80 and 443).
func (e Egress) HostAddrs() (map[string][]netip.AddrPort, error) {
	out := map[string][]netip.AddrPort{}
	for name, addrs := range e.Hosts {
		for _, s := range addrs {
			if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
				out[name] = append(out[name], netip.AddrPortFrom(a, 0))
				continue
			}
			ap, err := netip.ParseAddrPort(s)
			if err != nil || ap.Port() == 0 || ap.Addr().Zone() != "" {
				return nil, fmt.Errorf("egress: host %s: %q is not an IP address or address:port", name, s)
			}
			out[name] = append(out[name], ap)
		}
	}
	return out, nil
}

// AllowInternalPrefixes reads AllowInternal: each entry a CIDR or one
// address.
func (e Egress) AllowInternalPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range e.AllowInternal {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("egress: allow_internal %q is not a CIDR or an IP address", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	for i, p := range out {
		if a := p.Addr().Unmap(); a.IsLoopback() || a.IsUnspecified() && p.Bits() == p.Addr().BitLen() {
			return nil, fmt.Errorf("egress: allow_internal %q names the host itself, which it never opens; name a service there in egress.hosts (name=%s:port)", e.AllowInternal[i], a)
		}
	}
	return out, nil
}

// ProviderConfig is one named provider.
type ProviderConfig struct {
	Name string `yaml:"name"`
	// Kind is the implementation: docker (containers on a Docker engine)
	// or fake (in memory, for tests and demos).
	Kind string `yaml:"kind"`
	// Runtime is a docker provider's OCI runtime: "" for the engine's
	// default (runc), "runsc" for gVisor. The engine must know it
	// (dockerd's "runtimes"; scripts/setup-host.sh registers runsc).
	Runtime string `yaml:"runtime"`
	// DockerHost is a docker provider's engine; "" means docker_host.
	DockerHost string `yaml:"docker_host"`
	// NoPause and NoSnapshot take those capabilities out of a fake
	// provider, to see how paddock runs on providers without them.
	NoPause    bool `yaml:"no_pause"`
	NoSnapshot bool `yaml:"no_snapshot"`
}

// ParseProviders reads PADDOCK_PROVIDERS: comma-separated
// name=kind[:runtime], or a bare kind named after itself.
func ParseProviders(s string) ([]ProviderConfig, error) {
	var out []ProviderConfig
	for _, item := range SplitList(s) {
		name, spec, ok := strings.Cut(item, "=")
		if !ok {
			spec = name
		}
		kind, rt, _ := strings.Cut(spec, ":")
		if name == "" || kind == "" {
			return nil, fmt.Errorf("provider %q: want name=kind[:runtime]", item)
		}
		out = append(out, ProviderConfig{Name: name, Kind: kind, Runtime: rt})
	}
	return out, nil
}

// ProviderList is the providers to register: Providers, or the single
// provider Provider names.
func (c Config) ProviderList() []ProviderConfig {
	if len(c.Providers) > 0 {
		return c.Providers
	}
	return []ProviderConfig{{Name: c.Provider, Kind: c.Provider}}
}

// WarmPool is a warm pool for one template; unset fields take the
// defaults a project created without them gets.
type WarmPool struct {
	Image     string `yaml:"image"`
	CPUMillis int64  `yaml:"cpu_millis"`
	MemoryMB  int64  `yaml:"memory_mb"`
	PidsLimit int64  `yaml:"pids_limit"`
	Network   string `yaml:"network"`
	Size      int    `yaml:"size"`
	Running   bool   `yaml:"running"` // kept running, agent link open
}

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		Listen:       "127.0.0.1:8080",
		DataDir:      "./data",
		Provider:     "docker",
		DefaultImage: "paddock/debian:bookworm",
		LogLevel:     "info",
		LogFormat:    "json",
		IdleTimeout:  15 * time.Minute,
		PullImages:   true,

		AllowedImages: []string{"paddock/*"},
		ImageBuilds:   []string{"computer-use", "all-harness"},
		DiskMB:        10240,
		MaxDiskMB:     102400,

		CreditRateCPU:    280, // about one credit per core-hour
		CreditRateMemory: 70,  // about a quarter of a credit per GiB-hour
		CreditFirstSlice: time.Minute,
		SettleInterval:   30 * time.Second,
		NewOrgCredits:    100,

		MaxKeepalive: 24 * time.Hour,
		ArchiveAfter: 24 * time.Hour,

		Egress: Egress{
			ProxyPort: 3128,
			Retention: 30 * 24 * time.Hour,
		},
	}
}

// LoadFile applies a YAML file over c. A missing file is an error only when
// required.
func (c *Config) LoadFile(path string, required bool) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// LoadEnv applies PADDOCK_* variables over c, read through lookup.
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	str := map[string]*string{
		"PADDOCK_LISTEN":          &c.Listen,
		"PADDOCK_DATA_DIR":        &c.DataDir,
		"PADDOCK_PROVIDER":        &c.Provider,
		"PADDOCK_STORE":           &c.Store,
		"PADDOCK_SHIM_PATH":       &c.ShimPath,
		"PADDOCK_DEFAULT_IMAGE":   &c.DefaultImage,
		"PADDOCK_DEFAULT_HARNESS": &c.DefaultHarness,
		"PADDOCK_IMAGE_BUILDER":   &c.ImageBuilder,
		"PADDOCK_DOCKER_HOST":     &c.DockerHost,
		"PADDOCK_RUN_DIR":         &c.RunDir,
		"PADDOCK_BOOTSTRAP_KEY":   &c.BootstrapKey,
		"PADDOCK_LOG_LEVEL":       &c.LogLevel,
		"PADDOCK_LOG_FORMAT":      &c.LogFormat,
		"PADDOCK_INSTANCE_ID":     &c.InstanceID,
		"PADDOCK_SIGN_IN_DOMAIN":  &c.SignInDomain,
		"PADDOCK_SSH_LISTEN":      &c.SSHListen,
		"PADDOCK_SSH_ADDRESS":     &c.SSHAddress,
		"PADDOCK_PREVIEW_DOMAIN":  &c.PreviewDomain,
		"PADDOCK_PREVIEW_SCHEME":  &c.PreviewScheme,
		"PADDOCK_PREVIEW_PORT":    &c.PreviewPort,

		"PADDOCK_CREDIT_PROVIDER_RATES": &c.CreditProviderRates,
	}
	for k, p := range str {
		if v, ok := lookup(k); ok && v != "" {
			*p = v
		}
	}
	if v, ok := lookup("PADDOCK_IDLE_TIMEOUT"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_IDLE_TIMEOUT: %w", err)
		}
		c.IdleTimeout = d
	}
	for k, p := range map[string]*time.Duration{
		"PADDOCK_CREDIT_FIRST_SLICE": &c.CreditFirstSlice,
		"PADDOCK_SETTLE_INTERVAL":    &c.SettleInterval,
		"PADDOCK_MAX_KEEPALIVE":      &c.MaxKeepalive,
		"PADDOCK_ARCHIVE_AFTER":      &c.ArchiveAfter,
	} {
		if v, ok := lookup(k); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = d
		}
	}
	for k, p := range map[string]*int64{
		"PADDOCK_CREDIT_RATE_CPU":    &c.CreditRateCPU,
		"PADDOCK_CREDIT_RATE_MEMORY": &c.CreditRateMemory,
		"PADDOCK_DISK_MB":            &c.DiskMB,
		"PADDOCK_MAX_DISK_MB":        &c.MaxDiskMB,
	} {
		if v, ok := lookup(k); ok && v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = n
		}
	}
	if v, ok := lookup("PADDOCK_NEW_ORG_CREDITS"); ok && v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("PADDOCK_NEW_ORG_CREDITS: %w", err)
		}
		c.NewOrgCredits = f
	}
	if v, ok := lookup("PADDOCK_PROVIDERS"); ok && v != "" {
		ps, err := ParseProviders(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_PROVIDERS: %w", err)
		}
		c.Providers = ps
	}
	if v, ok := lookup("PADDOCK_RECONCILE_CONCURRENCY"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("PADDOCK_RECONCILE_CONCURRENCY: want a number of runtimes, not %q", v)
		}
		c.ReconcileConcurrency = n
	}
	if v, ok := lookup("PADDOCK_WARM_POOL_RUNNING"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_WARM_POOL_RUNNING: %w", err)
		}
		c.WarmPoolRunning = b
	}
	if v, ok := lookup("PADDOCK_WARM_POOL"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_WARM_POOL: %w", err)
		}
		c.WarmPool = n
	}
	if v, ok := lookup("PADDOCK_ALLOWED_IMAGES"); ok && v != "" {
		c.AllowedImages = SplitList(v)
	}
	if v, ok := lookup("PADDOCK_TRUSTED_PROXIES"); ok && v != "" {
		c.TrustedProxies = SplitList(v)
	}
	if v, ok := lookup("PADDOCK_IMAGE_BUILDS"); ok && v != "" {
		c.ImageBuilds = SplitList(v)
	}
	for k, p := range map[string]*string{
		"PADDOCK_TRUSTED_PROXY_HEADER":    &c.TrustedProxyHeader,
		"PADDOCK_EGRESS_PROXY_NETWORK":    &c.Egress.ProxyNetwork,
		"PADDOCK_EGRESS_OPEN_NETWORK":     &c.Egress.OpenNetwork,
		"PADDOCK_EGRESS_UPSTREAM_CA_FILE": &c.Egress.UpstreamCAFile,
	} {
		if v, ok := lookup(k); ok && v != "" {
			*p = v
		}
	}
	if v, ok := lookup("PADDOCK_EGRESS_PROXY_PORT"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_EGRESS_PROXY_PORT: %w", err)
		}
		c.Egress.ProxyPort = n
	}
	if v, ok := lookup("PADDOCK_EGRESS_RETENTION"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_EGRESS_RETENTION: %w", err)
		}
		c.Egress.Retention = d
	}
	if v, ok := lookup("PADDOCK_SECRETS_KEY"); ok && v != "" {
		c.SecretsKey = v
	}
	if v, ok := lookup("PADDOCK_SESSION_KEY"); ok && v != "" {
		c.SessionKey = v
	}
	for k, p := range map[string]*time.Duration{
		"PADDOCK_CHALLENGE_TTL":          &c.ChallengeTTL,
		"PADDOCK_SESSION_TTL":            &c.SessionTTL,
		"PADDOCK_MEMBERS_INVITATION_TTL": &c.Members.InvitationTTL,
	} {
		if v, ok := lookup(k); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = d
		}
	}
	for k, p := range map[string]*float64{
		"PADDOCK_RATE_PER_KEY":    &c.Limits.RatePerKey,
		"PADDOCK_RATE_PER_CLIENT": &c.Limits.RatePerClient,
	} {
		if v, ok := lookup(k); ok && v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = f
		}
	}
	for k, p := range map[string]*int{
		"PADDOCK_BURST_PER_KEY":            &c.Limits.BurstPerKey,
		"PADDOCK_BURST_PER_CLIENT":         &c.Limits.BurstPerClient,
		"PADDOCK_EXEC_STREAMS_PER_RUNTIME": &c.Limits.ExecStreamsPerRuntime,
		"PADDOCK_EXEC_STREAMS_PER_USER":    &c.Limits.ExecStreamsPerUser,
		"PADDOCK_TERMINALS_PER_RUNTIME":    &c.Limits.TerminalsPerRuntime,
		"PADDOCK_TERMINALS_PER_USER":       &c.Limits.TerminalsPerUser,
	} {
		if v, ok := lookup(k); ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = n
		}
	}
	for k, p := range map[string]*int64{
		"PADDOCK_JSON_BODY_BYTES":   &c.Limits.JSONBodyBytes,
		"PADDOCK_UPLOAD_BODY_BYTES": &c.Limits.UploadBodyBytes,
		"PADDOCK_BUNDLE_BODY_BYTES": &c.Limits.BundleBodyBytes,
	} {
		if v, ok := lookup(k); ok && v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*p = n
		}
	}
	if v, ok := lookup("PADDOCK_EGRESS_DISABLED"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_EGRESS_DISABLED: %w", err)
		}
		c.Egress.Disabled = b
	}
	if v, ok := lookup("PADDOCK_EGRESS_HOSTS"); ok && v != "" {
		c.Egress.Hosts = map[string][]string{}
		for _, kv := range SplitList(v) {
			name, addr, ok := strings.Cut(kv, "=")
			if !ok || name == "" || addr == "" {
				return fmt.Errorf("PADDOCK_EGRESS_HOSTS: %q is not name=address or name=address:port", kv)
			}
			c.Egress.Hosts[name] = append(c.Egress.Hosts[name], addr)
		}
	}
	if v, ok := lookup("PADDOCK_EGRESS_ALLOW_INTERNAL"); ok && v != "" {
		c.Egress.AllowInternal = SplitList(v)
	}
	if v, ok := lookup("PADDOCK_EGRESS_BROKER_PORTS"); ok && v != "" {
		c.Egress.BrokerPorts = nil
		for _, p := range SplitList(v) {
			n, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("PADDOCK_EGRESS_BROKER_PORTS: %q is not a port", p)
			}
			c.Egress.BrokerPorts = append(c.Egress.BrokerPorts, n)
		}
	}
	if v, ok := lookup("PADDOCK_WRITABLE_ROOT_UNBOUNDED"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_WRITABLE_ROOT_UNBOUNDED: %w", err)
		}
		c.WritableRootUnbounded = b
	}
	if v, ok := lookup("PADDOCK_MEMBERS_DIRECT_ADD"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_MEMBERS_DIRECT_ADD: %w", err)
		}
		c.Members.DirectAdd = b
	}
	if v, ok := lookup("PADDOCK_PULL_IMAGES"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_PULL_IMAGES: %w", err)
		}
		c.PullImages = b
	}
	return nil
}

// SplitList splits a comma-separated list, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Validate checks c and makes paths absolute.
func (c *Config) Validate() error {
	if c.Listen == "" {
		return errors.New("listen address is empty")
	}
	if c.DataDir == "" {
		return errors.New("data dir is empty")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = abs
	if err := c.validateProviders(); err != nil {
		return err
	}
	switch c.PreviewScheme {
	case "", "http", "https":
	default:
		return fmt.Errorf("preview scheme %q is not http or https", c.PreviewScheme)
	}
	if _, err := clientaddr.ParseTrusted(c.TrustedProxies); err != nil {
		return err
	}
	if _, err := clientaddr.ParseHeader(c.TrustedProxyHeader); err != nil {
		return err
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return fmt.Errorf("log format %q is not one of json, text", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log level %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.InstanceID != "" && !instanceRE.MatchString(c.InstanceID) {
		return fmt.Errorf("instance id %q must be 1 to 128 letters, digits, '.', '_' or '-'", c.InstanceID)
	}
	if _, err := c.Egress.AllowInternalPrefixes(); err != nil {
		return err
	}
	if e := c.Egress; !e.Disabled {
		if e.ProxyNetwork != "" && e.ProxyNetwork == e.OpenNetwork {
			return errors.New("egress: proxy_network and open_network must differ")
		}
		if e.ProxyPort < 1 || e.ProxyPort > 65535 {
			return fmt.Errorf("egress: proxy port %d is not between 1 and 65535", e.ProxyPort)
		}
		for _, p := range e.BrokerPorts {
			if p < 1 || p > 65535 {
				return fmt.Errorf("egress: broker port %d is not between 1 and 65535", p)
			}
		}
		if _, err := e.HostAddrs(); err != nil {
			return err
		}
	}
	if t := c.Members.InvitationTTL; t != 0 && (t < time.Minute || t > 365*24*time.Hour) {
		return fmt.Errorf("members: invitation ttl %s is not between 1m and 8760h", t)
	}
	if c.IdleTimeout < 10*time.Second {
		return fmt.Errorf("idle timeout %s is shorter than 10s", c.IdleTimeout)
	}
	if c.CreditRateCPU < 0 || c.CreditRateMemory < 0 {
		return fmt.Errorf("credit rates must not be negative")
	}
	if c.CreditFirstSlice < time.Second || c.CreditFirstSlice > 24*time.Hour {
		return fmt.Errorf("credit first slice %s is not between 1s and 24h", c.CreditFirstSlice)
	}
	if !(c.NewOrgCredits >= 0 && c.NewOrgCredits <= 1e9) {
		return fmt.Errorf("new org credits %v is not between 0 and 1e9", c.NewOrgCredits)
	}
	if c.SettleInterval < time.Second || c.SettleInterval > time.Hour {
		return fmt.Errorf("settle interval %s is not between 1s and 1h", c.SettleInterval)
	}
	if c.MaxKeepalive < time.Minute || c.MaxKeepalive > 30*24*time.Hour {
		return fmt.Errorf("max keepalive %s is not between 1m and 720h", c.MaxKeepalive)
	}
	if c.IdleTimeout > c.MaxKeepalive {
		return fmt.Errorf("idle timeout %s is longer than the max keepalive %s", c.IdleTimeout, c.MaxKeepalive)
	}
	if c.ArchiveAfter != 0 && c.ArchiveAfter < time.Minute {
		return fmt.Errorf("archive after %s is neither 0 (never) nor at least 1m", c.ArchiveAfter)
	}
	if c.DiskMB < 64 || c.MaxDiskMB < c.DiskMB {
		return fmt.Errorf("disk quota: the default (%d MiB) must be at least 64 MiB and at most the maximum (%d MiB)", c.DiskMB, c.MaxDiskMB)
	}
	for _, img := range c.AllowedImages {
		if img == "" || img == "*" || strings.ContainsAny(img, " \t\n") {
			return fmt.Errorf("allowed image %q is not an image reference or a prefix ending in '*' ('*' alone would allow any registry)", img)
		}
	}
	const maxWarm = 64
	if c.WarmPool < 0 || c.WarmPool > maxWarm {
		return fmt.Errorf("warm pool size %d is not between 0 and %d", c.WarmPool, maxWarm)
	}
	for i, wp := range c.WarmPools {
		if wp.Size < 0 || wp.Size > maxWarm {
			return fmt.Errorf("warm_pools[%d]: size %d is not between 0 and %d", i, wp.Size, maxWarm)
		}
	}
	return nil
}

// validateProviders checks the provider list: unique valid names, known
// kinds, runtimes only on docker, and a default among them.
func (c *Config) validateProviders() error {
	seen := map[string]bool{}
	for _, p := range c.ProviderList() {
		switch {
		case !providerNameRE.MatchString(p.Name):
			return fmt.Errorf("provider name %q must be 1 to 63 lower-case letters, digits or '-'", p.Name)
		case seen[p.Name]:
			return fmt.Errorf("provider %q is listed twice", p.Name)
		case p.Kind != "docker" && p.Kind != "fake":
			return fmt.Errorf("provider %q: kind %q is not one of docker, fake", p.Name, p.Kind)
		case p.Kind != "docker" && (p.Runtime != "" || p.DockerHost != ""):
			return fmt.Errorf("provider %q: runtime and docker_host are for docker providers", p.Name)
		case p.Kind != "fake" && (p.NoPause || p.NoSnapshot):
			return fmt.Errorf("provider %q: no_pause and no_snapshot are for fake providers", p.Name)
		}
		seen[p.Name] = true
	}
	if !seen[c.Provider] {
		return fmt.Errorf("the default provider %q is not one of the listed providers", c.Provider)
	}
	return nil
}

var providerNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
