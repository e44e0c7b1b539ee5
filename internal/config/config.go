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
	"reflect"
	"regexp"
	"slices"
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

// Config is what `paddock serve` runs with: one section per component,
// each embedded inline (the file's keys are flat; see sections.go). The
// `section` tag names the section for Section and the settings reference.
type Config struct {
	ServerConfig         `yaml:",inline" section:"server"`
	HTTPConfig           `yaml:",inline" section:"http"`
	StoreConfig          `yaml:",inline" section:"store"`
	AccessConfig         `yaml:",inline" section:"access"`
	ProvidersConfig      `yaml:",inline" section:"providers"`
	EgressConfig         `yaml:",inline" section:"egress"`
	SecretsConfig        `yaml:",inline" section:"secrets"`
	HostsConfig          `yaml:",inline" section:"hosts"`
	RuntimeConfig        `yaml:",inline" section:"runtime"`
	LedgerConfig         `yaml:",inline" section:"ledger"`
	BindingsConfig       `yaml:",inline" section:"bindings"`
	SessionsConfig       `yaml:",inline" section:"sessions"`
	TasksConfig          `yaml:",inline" section:"tasks"`
	WorldsConfig         `yaml:",inline" section:"worlds"`
	SnapshotsConfig      `yaml:",inline" section:"snapshots"`
	TemplateBuildsConfig `yaml:",inline" section:"template_builds"`
	WorkflowsConfig      `yaml:",inline" section:"workflows"`
	InstanceConfig       `yaml:",inline" section:"instance"`
	HostTeardownConfig   `yaml:",inline" section:"host-teardown"`
	LifecycleConfig      `yaml:",inline" section:"lifecycle"`
	SSHConfig            `yaml:",inline" section:"ssh"`
	PreviewConfig        `yaml:",inline" section:"preview"`
	EventsConfig         `yaml:",inline" section:"events"`
	MetricsConfig        `yaml:",inline" section:"metrics"`
}

// Section is a pointer to the section of c that the component name
// configures (server, http, store, access, providers, egress, secrets, runtime,
// ledger, bindings, sessions, snapshots, workflows, instance, lifecycle, ssh, preview, events, metrics), or nil
// for a name that has none.
func (c *Config) Section(name string) any {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("section") == name {
			return v.Field(i).Addr().Interface()
		}
	}
	return nil
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
	// Kind is the implementation: docker (containers on a Docker engine),
	// kubernetes (Pods on a cluster), ssh (containers on the Docker
	// engine of a machine reached over SSH) or fake (in memory, for tests
	// and demos).
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
	// Kubernetes is a kubernetes provider's settings (required for that
	// kind, refused on the others).
	Kubernetes *KubernetesProvider `yaml:"kubernetes"`
	// SSH is an ssh provider's settings (required for that kind, refused
	// on the others).
	SSH *SSHProvider `yaml:"ssh"`
}

// ParseProviders reads PADDOCK_PROVIDERS: comma-separated
// name=kind[:runtime], or a bare kind named after itself. For a
// kubernetes provider the part after the colon is its namespace
// (name=kubernetes:NAMESPACE), on the in-cluster config.
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
		pc := ProviderConfig{Name: name, Kind: kind, Runtime: rt}
		if kind == KindKubernetes {
			pc.Runtime, pc.Kubernetes = "", &KubernetesProvider{Namespace: rt}
		}
		out = append(out, pc)
	}
	return out, nil
}

// ProviderList is the providers to register: Providers, or the single
// provider Provider names.
func (c ProvidersConfig) ProviderList() []ProviderConfig {
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
	// Min and Max, in place of Size, make the pool adaptive: kept at what
	// its claim rate needs, between them.
	Min     int  `yaml:"min"`
	Max     int  `yaml:"max"`
	Running bool `yaml:"running"` // kept running, agent link open
}

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		ServerConfig: ServerConfig{DataDir: "./data", LogLevel: "info", LogFormat: "json"},
		HTTPConfig:   HTTPConfig{Listen: "127.0.0.1:8080"},
		ProvidersConfig: ProvidersConfig{
			Provider:    "docker",
			PullImages:  true,
			ImageBuilds: []string{"computer-use", "all-harness"},
		},
		EgressConfig: EgressConfig{Egress: Egress{
			ProxyPort: 3128,
			Retention: 30 * 24 * time.Hour,
		}},
		RuntimeConfig: RuntimeConfig{
			DefaultImage:     "paddock/debian:bookworm",
			AllowedImages:    []string{"paddock/*"},
			DiskMB:           10240,
			MaxDiskMB:        102400,
			IdleTimeout:      15 * time.Minute,
			MaxKeepalive:     24 * time.Hour,
			ArchiveAfter:     24 * time.Hour,
			CreditRateCPU:    280, // about one credit per core-hour
			CreditRateMemory: 70,  // about a quarter of a credit per GiB-hour
			CreditFirstSlice: time.Minute,
			// A hundredth of a credit per GiB-hour of snapshots.
			CreditSnapshotRate: 10_000,
		},
		LedgerConfig: LedgerConfig{
			SettleInterval: 30 * time.Second,
			NewOrgCredits:  100,
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

// LoadEnv applies PADDOCK_* variables over c, read through lookup: each
// setting's `env` variable, when set and not empty, read as its Setting
// reads it.
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	for _, s := range Settings() {
		if s.Env == "" {
			continue
		}
		if v, ok := lookup(s.Env); ok && v != "" {
			if err := s.Set(c, v); err != nil {
				return fmt.Errorf("%s: %w", s.Env, err)
			}
		}
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

// Validate checks c and makes paths absolute: each section that has
// rules checks its own settings, in the order of Config's fields.
func (c *Config) Validate() error {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if s, ok := v.Field(i).Addr().Interface().(interface{ validate() error }); ok {
			if err := s.validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *InstanceConfig) validate() error {
	if c.Instance == "" {
		if c.InstanceTemplate != "" {
			return fmt.Errorf("instance_template (PADDOCK_INSTANCE_TEMPLATE) is set without instance")
		}
		return nil
	}
	if _, _, _, ok := c.Names(); !ok {
		return fmt.Errorf("instance (PADDOCK_INSTANCE, --instance) %q is not org/workspace/project", c.Instance)
	}
	return nil
}

// Names are the org, workspace and project Instance names; ok is false
// when it is not three names, or is "".
func (c InstanceConfig) Names() (org, workspace, project string, ok bool) {
	parts := strings.Split(c.Instance, "/")
	if len(parts) != 3 || slices.Contains(parts, "") {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func (c *ServerConfig) validate() error {
	if c.DataDir == "" {
		return errors.New("data dir is empty")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = abs
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return fmt.Errorf("log format %q is not one of json, text", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log level %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.ReplicaID != "" && !instanceRE.MatchString(c.ReplicaID) {
		return fmt.Errorf("replica id %q must be 1 to 128 letters, digits, '.', '_' or '-'", c.ReplicaID)
	}
	if c.LeaseTTL != 0 && (c.LeaseTTL < time.Second || c.LeaseTTL > time.Hour) {
		return fmt.Errorf("lease ttl %s is not between 1s and 1h", c.LeaseTTL)
	}
	return nil
}

func (c *StoreConfig) validate() error {
	if c.InstanceID != "" && !instanceRE.MatchString(c.InstanceID) {
		return fmt.Errorf("instance id %q must be 1 to 128 letters, digits, '.', '_' or '-'", c.InstanceID)
	}
	return nil
}

func (c *AccessConfig) validate() error {
	if t := c.Members.InvitationTTL; t != 0 && (t < time.Minute || t > 365*24*time.Hour) {
		return fmt.Errorf("members: invitation ttl %s is not between 1m and 8760h", t)
	}
	return nil
}

func (c *HTTPConfig) validate() error {
	if c.Listen == "" {
		return errors.New("listen address is empty")
	}
	if _, err := clientaddr.ParseTrusted(c.TrustedProxies); err != nil {
		return err
	}
	if _, err := clientaddr.ParseHeader(c.TrustedProxyHeader); err != nil {
		return err
	}
	return nil
}

func (c *ProvidersConfig) validate() error { return c.validateProviders() }

func (c *EgressConfig) validate() error {
	e := c.Egress
	if _, err := e.AllowInternalPrefixes(); err != nil {
		return err
	}
	if e.Disabled {
		return nil
	}
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
	_, err := e.HostAddrs()
	return err
}

func (c *RuntimeConfig) validate() error {
	if c.IdleTimeout < 10*time.Second {
		return fmt.Errorf("idle timeout %s is shorter than 10s", c.IdleTimeout)
	}
	if c.MaxKeepalive < time.Minute || c.MaxKeepalive > 30*24*time.Hour {
		return fmt.Errorf("max keepalive %s is not between 1m and 720h", c.MaxKeepalive)
	}
	if c.IdleTimeout > c.MaxKeepalive {
		return fmt.Errorf("idle timeout %s is longer than the max keepalive %s", c.IdleTimeout, c.MaxKeepalive)
	}
	if c.DiskMB < 64 || c.MaxDiskMB < c.DiskMB {
		return fmt.Errorf("disk quota: the default (%d MiB) must be at least 64 MiB and at most the maximum (%d MiB)", c.DiskMB, c.MaxDiskMB)
	}
	for _, img := range c.AllowedImages {
		if img == "" || img == "*" || strings.ContainsAny(img, " \t\n") {
			return fmt.Errorf("allowed image %q is not an image reference or a prefix ending in '*' ('*' alone would allow any registry)", img)
		}
	}
	return c.validatePools()
}

func (c *LedgerConfig) validate() error {
	if !(c.NewOrgCredits >= 0 && c.NewOrgCredits <= 1e9) {
		return fmt.Errorf("new org credits %v is not between 0 and 1e9", c.NewOrgCredits)
	}
	if c.SettleInterval < time.Second || c.SettleInterval > time.Hour {
		return fmt.Errorf("settle interval %s is not between 1s and 1h", c.SettleInterval)
	}
	return nil
}

// validatePools checks archiving, the warm pools and the prices.
func (c *RuntimeConfig) validatePools() error {
	if c.CreditRateCPU < 0 || c.CreditRateMemory < 0 {
		return fmt.Errorf("credit rates must not be negative")
	}
	if c.CreditFirstSlice < time.Second || c.CreditFirstSlice > 24*time.Hour {
		return fmt.Errorf("credit first slice %s is not between 1s and 24h", c.CreditFirstSlice)
	}
	if c.ArchiveAfter != 0 && c.ArchiveAfter < time.Minute {
		return fmt.Errorf("archive after %s is neither 0 (never) nor at least 1m", c.ArchiveAfter)
	}
	const maxWarm = 64
	if c.WarmPool < 0 || c.WarmPool > maxWarm {
		return fmt.Errorf("warm pool size %d is not between 0 and %d", c.WarmPool, maxWarm)
	}
	for i, wp := range c.WarmPools {
		if wp.Size < 0 || wp.Size > maxWarm {
			return fmt.Errorf("warm_pools[%d]: size %d is not between 0 and %d", i, wp.Size, maxWarm)
		}
		switch {
		case wp.Min == 0 && wp.Max == 0:
		case wp.Size != 0:
			return fmt.Errorf("warm_pools[%d]: give a size, or min and max, not both", i)
		case wp.Min < 0 || wp.Max < 1 || wp.Min > wp.Max || wp.Max > maxWarm:
			return fmt.Errorf("warm_pools[%d]: min %d and max %d are not 0 <= min <= max, 1 <= max <= %d", i, wp.Min, wp.Max, maxWarm)
		}
	}
	if c.WarmPoolMemoryCeilingMB < 0 {
		return fmt.Errorf("warm pool memory ceiling %d MiB is negative", c.WarmPoolMemoryCeilingMB)
	}
	return nil
}

func (c *PreviewConfig) validate() error {
	switch c.PreviewScheme {
	case "", "http", "https":
		return nil
	default:
		return fmt.Errorf("preview scheme %q is not http or https", c.PreviewScheme)
	}
}

// validateProviders checks the provider list: unique valid names, known
// kinds, each kind's settings only on it (a kubernetes provider's valid),
// and a default among them.
func (c *ProvidersConfig) validateProviders() error {
	seen := map[string]bool{}
	for _, p := range c.ProviderList() {
		switch {
		case !providerNameRE.MatchString(p.Name):
			return fmt.Errorf("provider name %q must be 1 to 63 lower-case letters, digits or '-'", p.Name)
		case seen[p.Name]:
			return fmt.Errorf("provider %q is listed twice", p.Name)
		case p.Kind != "docker" && p.Kind != "fake" && p.Kind != KindKubernetes && p.Kind != KindSSH:
			return fmt.Errorf("provider %q: kind %q is not one of docker, kubernetes, ssh, fake", p.Name, p.Kind)
		case p.Kind != "docker" && (p.Runtime != "" || p.DockerHost != ""):
			return fmt.Errorf("provider %q: runtime and docker_host are for docker providers", p.Name)
		case p.Kind != "fake" && (p.NoPause || p.NoSnapshot):
			return fmt.Errorf("provider %q: no_pause and no_snapshot are for fake providers", p.Name)
		case p.Kind != KindKubernetes && p.Kubernetes != nil:
			return fmt.Errorf("provider %q: a kubernetes block is for kubernetes providers", p.Name)
		case p.Kind == KindKubernetes && p.Kubernetes == nil:
			return fmt.Errorf("provider %q: a kubernetes provider needs its kubernetes block (at least namespace)", p.Name)
		case p.Kind != KindSSH && p.SSH != nil:
			return fmt.Errorf("provider %q: an ssh block is for ssh providers", p.Name)
		case p.Kind == KindSSH && p.SSH == nil:
			return fmt.Errorf("provider %q: an ssh provider needs its ssh block (address, user, key_file and a pinned host key) in the config file", p.Name)
		}
		if p.SSH != nil {
			if err := p.SSH.validate(); err != nil {
				return fmt.Errorf("provider %q: ssh: %w", p.Name, err)
			}
		}
		if p.Kubernetes != nil {
			if err := p.Kubernetes.validate(); err != nil {
				return fmt.Errorf("provider %q: kubernetes: %w", p.Name, err)
			}
		}
		seen[p.Name] = true
	}
	if !seen[c.Provider] {
		return fmt.Errorf("the default provider %q is not one of the listed providers", c.Provider)
	}
	return nil
}

var providerNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
