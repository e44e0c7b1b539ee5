package config

import "time"

// Each section below is one component's settings, embedded in Config
// inline, so the YAML file keeps flat keys and cfg.DataDir, cfg.Limits, …
// read as before. A field's tags are the only place a setting is written
// down: `yaml` is its key in the file ("-": environment only), `env` its
// PADDOCK_* variable ("-": file only), `flag` its `paddock serve` flag
// where it has one, and `help` one line for `paddock serve --help` and
// docs/CONFIG.md. A `parse` tag names the reader of a variable whose value
// has a grammar of its own (see settings.go). Defaults are in Default.

// ServerConfig is what the whole server shares: where its data lives, how
// it logs, and which replica it is. No component reads it: the data
// directory and the replica's leases reach them through the store
// component's instance.
type ServerConfig struct {
	DataDir   string `yaml:"data_dir" env:"PADDOCK_DATA_DIR" flag:"data-dir" help:"directory for the database and agent sockets"`
	LogLevel  string `yaml:"log_level" env:"PADDOCK_LOG_LEVEL" flag:"log-level" help:"debug, info, warn or error"`
	LogFormat string `yaml:"log_format" env:"PADDOCK_LOG_FORMAT" flag:"log-format" help:"json (one object per line, with request, runtime and sandbox ids) or text"`
	// ReplicaID names this server among the replicas of one store: it
	// holds the leases of the background loops it runs. "" means
	// <hostname>-<hash of the data dir and listen address>, the same at
	// every start. Two running replicas must never share one.
	ReplicaID string `yaml:"replica_id" env:"PADDOCK_REPLICA_ID" flag:"replica-id" help:"this server's name among the replicas of one store, holder of the leases of the loops it runs (default <hostname>-<hash of the data dir and listen address>, the same at every start; never two running replicas with one)"`
	// LeaseTTL is how long a replica's lease on a background loop lasts
	// without a renewal: how long the loops stop when their replica dies.
	LeaseTTL time.Duration `yaml:"lease_ttl" env:"PADDOCK_LEASE_TTL" flag:"lease-ttl" help:"how long a replica's lease on a background loop lasts unrenewed: the longest the loops stop when their replica dies (0: 15s)"`
}

// StoreConfig names the store and the installation it keeps.
type StoreConfig struct {
	// InstanceID names the installation on its first start (it labels all
	// compute); "" means a random UUID. Later starts keep the stored one.
	InstanceID string `yaml:"instance_id" env:"PADDOCK_INSTANCE_ID" help:"the installation's name on its first start, labelling all its compute (default: a random UUID; later starts keep the stored one)"`

	// Store is "sqlite:<path>" (or a bare path), or a PostgreSQL URL
	// (postgres://user@host:port/db?sslmode=…) for several replicas on
	// one database; "" means <data-dir>/paddock.db.
	Store string `yaml:"store" env:"PADDOCK_STORE" flag:"database" help:"the store: sqlite:<path> or a bare path (default <data-dir>/paddock.db), or postgres://user@host:port/db?sslmode=… for PostgreSQL"`
}

// AccessConfig is who may do what: the first admin key, wallet sign-in,
// how members are added.
type AccessConfig struct {
	BootstrapKey string `yaml:"bootstrap_key" env:"PADDOCK_BOOTSTRAP_KEY" help:"the first installation admin key, instead of a random one printed once"`

	// Wallet sign-in: how long a challenge may be answered, and how long
	// a session lasts (0: 5m and 24h). SessionKey, when set, seals session
	// tokens (base64 of 32 bytes); otherwise <data-dir>/session.key, made
	// on first start. Like SecretsKey it is read from the environment
	// only. SignInDomain names the server in the message a wallet signs,
	// as users reach it (host:port); "" means the listen address, with
	// "localhost" for an unspecified host.
	SignInDomain string        `yaml:"sign_in_domain" env:"PADDOCK_SIGN_IN_DOMAIN" help:"the server's host:port in the message a wallet signs, as users reach it (default the listen address)"`
	ChallengeTTL time.Duration `yaml:"challenge_ttl" env:"PADDOCK_CHALLENGE_TTL" help:"how long a wallet sign-in challenge may be answered (0: 5m)"`
	SessionTTL   time.Duration `yaml:"session_ttl" env:"PADDOCK_SESSION_TTL" help:"how long a sign-in session lasts (0: 24h)"`
	SessionKey   string        `yaml:"-" env:"PADDOCK_SESSION_KEY" help:"the key session tokens are sealed with, base64 of 32 bytes (default <data-dir>/session.key, made on first start); environment only"`

	// Members: how org admins add members.
	Members Members `yaml:"members"`
}

// ProvidersConfig is the compute this installation offers, and the images
// it builds on the default provider's engine.
type ProvidersConfig struct {
	// Provider is the default provider's name: one of Providers, or,
	// when Providers is empty, the kind of the only provider (docker or
	// fake), named after it. A kubernetes provider is always listed.
	Provider string `yaml:"provider" env:"PADDOCK_PROVIDER" flag:"provider" help:"sandbox provider: docker or fake"`
	// Providers are the providers this installation offers, by name; a
	// runtime picks one (runtime.provider), else gets Provider.
	Providers  []ProviderConfig `yaml:"providers" env:"PADDOCK_PROVIDERS" parse:"providers" help:"the providers offered, by name: name=kind[:runtime],… in the environment (name=kubernetes:namespace for one on the in-cluster config), a list of {name, kind, runtime, docker_host, no_pause, no_snapshot, kubernetes: {kubeconfig, context, namespace, runtime_class, storage_class, node_selector, tolerations, shim_image, image_pull_policy, network_policies, agent_from, proxy_address, deny_cidrs, pod_cidrs, overcommit, api_qps, api_burst, start_timeout}, ssh: {address, user, key_file, host_key, known_hosts, docker_socket, run_dir, disk_dir, mode}} in the file"`
	DockerHost string           `yaml:"docker_host" env:"PADDOCK_DOCKER_HOST" help:"the Docker engine of docker providers that name none (default DOCKER_HOST, then the local socket)"`
	ShimPath   string           `yaml:"shim_path" env:"PADDOCK_SHIM_PATH" flag:"shim-path" help:"path to the static paddock-shim binary (default: next to paddock, then PATH)"`
	RunDir     string           `yaml:"run_dir" env:"PADDOCK_RUN_DIR" flag:"run-dir" help:"directory for agent sockets (default <data-dir>/run when short enough)"`
	PullImages bool             `yaml:"pull_images" env:"PADDOCK_PULL_IMAGES" flag:"pull-images" help:"pull images that are not present locally"`
	// WritableRootUnbounded allows runtimes a writable root on a Docker
	// engine that cannot bound its size (only overlay2 over xfs with
	// project quotas can): such a root's writes are outside any quota.
	WritableRootUnbounded bool `yaml:"writable_root_unbounded" env:"PADDOCK_WRITABLE_ROOT_UNBOUNDED" flag:"writable-root-unbounded" help:"allow writable roots (rootfs: writable) on an engine that cannot bound their size: their writes are outside any quota"`
	// ImageBuilder is a script (scripts/build-images.sh) with which the
	// server builds ImageBuilds in the background once it serves, one
	// after another, saying how far each is in GET /api/images; "" builds
	// nothing.
	ImageBuilder string   `yaml:"image_builder" env:"PADDOCK_IMAGE_BUILDER" flag:"image-builder" help:"script that builds sandbox images (scripts/build-images.sh): the server builds --image-builds with it in the background once it serves"`
	ImageBuilds  []string `yaml:"image_builds" env:"PADDOCK_IMAGE_BUILDS" flag:"image-builds" help:"the image builder's targets to build in the background, in order, comma-separated"`
}

// EgressConfig is the egress proxy and the networks of the proxy and open
// modes (docker provider).
type EgressConfig struct {
	Egress Egress `yaml:"egress"`
}

// SecretsConfig is how secrets are sealed.
type SecretsConfig struct {
	// SecretsKey, when set, is the key secrets are sealed with (base64 of
	// 32 bytes); otherwise <data-dir>/secrets.key, made on first start. It
	// is read from the environment only, never from a file or a flag.
	SecretsKey string `yaml:"-" env:"PADDOCK_SECRETS_KEY" help:"the key secrets are sealed with, base64 of 32 bytes (default <data-dir>/secrets.key, made on first start); environment only"`
}

// RuntimeConfig is the defaults and bounds of a runtime's config, when a
// paused runtime is archived, the warm pools, and what compute costs: in
// micro-credits per second of one core and of one GiB of memory, with
// per-provider overrides written "name=cpu:memory,…", and how much of it
// a start prepays. Zero rates make compute free.
type RuntimeConfig struct {
	DefaultImage string `yaml:"default_image" env:"PADDOCK_DEFAULT_IMAGE" flag:"default-image" help:"image for runtimes that name none"`
	// AllowedImages are the images a runtime may name: exact references,
	// or prefixes ending in '*'. The default image is always allowed.
	// Snapshots (paddock/archive) never are; only their own runtime
	// restores them.
	AllowedImages []string `yaml:"allowed_images" env:"PADDOCK_ALLOWED_IMAGES" flag:"allowed-images" help:"images runtimes may use: exact references or prefixes ending in '*', comma-separated (the default image is always allowed)"`
	// DiskMB is a workspace's disk quota when its runtime names none;
	// MaxDiskMB is the most a runtime may ask for.
	DiskMB       int64         `yaml:"disk_mb" env:"PADDOCK_DISK_MB" flag:"disk-mb" help:"a workspace's disk quota in MiB when its runtime names none"`
	MaxDiskMB    int64         `yaml:"max_disk_mb" env:"PADDOCK_MAX_DISK_MB" flag:"max-disk-mb" help:"the largest disk quota a runtime may ask for, in MiB"`
	IdleTimeout  time.Duration `yaml:"idle_timeout" env:"PADDOCK_IDLE_TIMEOUT" flag:"idle-timeout" help:"default idle timeout of a runtime"`
	MaxKeepalive time.Duration `yaml:"max_keepalive" env:"PADDOCK_MAX_KEEPALIVE" flag:"max-keepalive" help:"the longest one keepalive may extend a sandbox's window"`
	// ArchiveAfter is how long a runtime may stay paused before it is
	// archived (0: never).
	ArchiveAfter time.Duration `yaml:"archive_after" env:"PADDOCK_ARCHIVE_AFTER" flag:"archive-after" help:"archive runtimes paused this long (0: never)"`
	// WarmPool is how many warm sandboxes to keep for runtimes of the
	// default template; WarmPools are pools for other templates (file
	// only).
	WarmPool int `yaml:"warm_pool" env:"PADDOCK_WARM_POOL" flag:"warm-pool" help:"warm sandboxes to keep ready for runtimes of the default image and resources"`
	// WarmPoolRunning keeps the default template's warm sandboxes running
	// with their agent link open (a claim is a transaction and nothing
	// else) instead of paused (which holds no CPU and less memory).
	WarmPoolRunning bool       `yaml:"warm_pool_running" env:"PADDOCK_WARM_POOL_RUNNING" flag:"warm-pool-running" help:"keep the warm sandboxes running with their agent link open (a start is a transaction) instead of paused"`
	WarmPools       []WarmPool `yaml:"warm_pools" env:"-" help:"warm pools for other templates, each {image, cpu_millis, memory_mb, pids_limit, network, size, running}, or {…, min, max} in place of size for a pool sized by its claim rate; file only"`
	// WarmPoolMemoryCeilingMB bounds the memory limits the adaptive warm
	// pools (min and max in place of size) hold together, with what the
	// fixed ones hold.
	WarmPoolMemoryCeilingMB int64 `yaml:"warm_pool_memory_ceiling_mb" env:"PADDOCK_WARM_POOL_MEMORY_CEILING_MB" flag:"warm-pool-memory-ceiling-mb" help:"the most memory (sum of their sandboxes' limits, in MiB, fixed pools included) adaptive warm pools grow to (0: 8192)"`
	// What compute costs: the meter the runtime service bills through.
	CreditRateCPU       int64         `yaml:"credit_rate_cpu" env:"PADDOCK_CREDIT_RATE_CPU" flag:"credit-rate-cpu" help:"micro-credits per core-second of compute"`
	CreditRateMemory    int64         `yaml:"credit_rate_memory" env:"PADDOCK_CREDIT_RATE_MEMORY" flag:"credit-rate-memory" help:"micro-credits per GiB-second of compute"`
	CreditProviderRates string        `yaml:"credit_provider_rates" env:"PADDOCK_CREDIT_PROVIDER_RATES" flag:"credit-provider-rates" help:"per-provider rates, name=cpu:memory,… (override the two above)"`
	CreditFirstSlice    time.Duration `yaml:"credit_first_slice" env:"PADDOCK_CREDIT_FIRST_SLICE" flag:"credit-first-slice" help:"compute a start or resume prepays"`
	CreditSnapshotRate  int64         `yaml:"credit_snapshot_rate" env:"PADDOCK_CREDIT_SNAPSHOT_RATE" flag:"credit-snapshot-rate" help:"micro-credits per GiB-hour of a snapshot's storage"`
}

// LedgerConfig is how often running compute is charged and how many
// credits a new org starts with. What compute costs is the runtime
// section's: the runtime service meters it.
type LedgerConfig struct {
	SettleInterval time.Duration `yaml:"settle_interval" env:"PADDOCK_SETTLE_INTERVAL" flag:"settle-interval" help:"how often running compute is charged"`
	NewOrgCredits  float64       `yaml:"new_org_credits" env:"PADDOCK_NEW_ORG_CREDITS" flag:"new-org-credits" help:"credits a new org starts with"`
}

// BindingsConfig is the bindings component's section; it has no settings
// yet.
type BindingsConfig struct{}

// SessionsConfig is how agent sessions (prompts and tasks) run.
type SessionsConfig struct {
	// DefaultHarness is the agent harness prompts and tasks run when they
	// name none ("" is claude-code).
	DefaultHarness string `yaml:"default_harness" env:"PADDOCK_DEFAULT_HARNESS" help:"the agent harness prompts and tasks run when they name none (default claude-code)"`
}

// TasksConfig is evaluation tasks' (none: a request bounds its own
// batch).
type TasksConfig struct{}

// WorkflowsConfig is workflows' (none: a workflow's definition bounds
// its own steps, and its runs run on the holder of the workflows lease).
type WorkflowsConfig struct{}

// WorldsConfig is worlds' (none: a request names its members, the
// provider makes the network).
type WorldsConfig struct{}

// SnapshotsConfig is where snapshots are kept: under the data directory,
// or in an S3-compatible bucket when an endpoint is set (checked at
// start: an endpoint that resolves to an internal address is refused
// unless S3AllowInternal says otherwise).
type SnapshotsConfig struct {
	SnapshotsS3Endpoint  string `yaml:"snapshots_s3_endpoint" env:"PADDOCK_SNAPSHOTS_S3_ENDPOINT" flag:"snapshots-s3-endpoint" help:"keep snapshots in this S3-compatible service, http(s)://host:port (default: under the data directory)"`
	SnapshotsS3Bucket    string `yaml:"snapshots_s3_bucket" env:"PADDOCK_SNAPSHOTS_S3_BUCKET" flag:"snapshots-s3-bucket" help:"the bucket snapshots are kept in"`
	SnapshotsS3Region    string `yaml:"snapshots_s3_region" env:"PADDOCK_SNAPSHOTS_S3_REGION" flag:"snapshots-s3-region" help:"the bucket's region"`
	SnapshotsS3AccessKey string `yaml:"snapshots_s3_access_key" env:"PADDOCK_SNAPSHOTS_S3_ACCESS_KEY" flag:"snapshots-s3-access-key" help:"the access key id of the bucket's credentials"`
	// SnapshotsS3SecretKey is read from the file or the environment,
	// never a flag.
	SnapshotsS3SecretKey string `yaml:"snapshots_s3_secret_key" env:"PADDOCK_SNAPSHOTS_S3_SECRET_KEY" help:"the secret key of the bucket's credentials; file or environment only"`
	// SnapshotsS3AccessKeySecret and SnapshotsS3SecretKeySecret name org
	// secrets instead of the keys above: each org's snapshots are read
	// and written with the values of its own secrets of those names.
	SnapshotsS3AccessKeySecret string `yaml:"snapshots_s3_access_key_secret" env:"PADDOCK_SNAPSHOTS_S3_ACCESS_KEY_SECRET" flag:"snapshots-s3-access-key-secret" help:"the org secret (by name) each org's bucket access key id is in, instead of snapshots_s3_access_key"`
	SnapshotsS3SecretKeySecret string `yaml:"snapshots_s3_secret_key_secret" env:"PADDOCK_SNAPSHOTS_S3_SECRET_KEY_SECRET" flag:"snapshots-s3-secret-key-secret" help:"the org secret (by name) each org's bucket secret key is in, instead of snapshots_s3_secret_key"`
	// SnapshotsS3AllowInternal opens an endpoint that resolves to a
	// loopback, link-local or private address: the installation's own.
	SnapshotsS3AllowInternal bool `yaml:"snapshots_s3_allow_internal" env:"PADDOCK_SNAPSHOTS_S3_ALLOW_INTERNAL" flag:"snapshots-s3-allow-internal" help:"allow the S3 endpoint to resolve to an internal address (loopback, link-local, private)"`
}

// InstanceConfig is instance mode: an installation that is one sandbox
// service instance names its runtime, whose operations it also serves
// under /api/sandbox.
type InstanceConfig struct {
	// Instance is org/workspace/project (names); "" is no instance mode.
	// What it names and does not exist is made at start.
	Instance string `yaml:"instance" env:"PADDOCK_INSTANCE" flag:"instance" help:"instance mode: org/workspace/project, the one runtime this installation serves under /api/sandbox (made at start when missing)"`
	// InstanceTemplate is the template (in the workspace) the project is
	// made from when it does not exist; "" the installation's defaults.
	InstanceTemplate string `yaml:"instance_template" env:"PADDOCK_INSTANCE_TEMPLATE" flag:"instance-template" help:"the template the instance's project is made from when it does not exist (default: the installation's defaults)"`
}

// TemplateBuildsConfig bounds the builds of templates' images from
// Dockerfiles (internal/templatebuild); 0 takes each default.
type TemplateBuildsConfig struct {
	TemplateBuildProvider     string        `yaml:"template_build_provider" env:"PADDOCK_TEMPLATE_BUILD_PROVIDER" flag:"template-build-provider" help:"the provider whose engine builds templates' images (default: the default provider)"`
	TemplateBuildMaxContextMB int64         `yaml:"template_build_max_context_mb" env:"PADDOCK_TEMPLATE_BUILD_MAX_CONTEXT_MB" flag:"template-build-max-context-mb" help:"the largest build context a template build takes, in MiB (0: 256)"`
	TemplateBuildTimeout      time.Duration `yaml:"template_build_timeout" env:"PADDOCK_TEMPLATE_BUILD_TIMEOUT" flag:"template-build-timeout" help:"how long a template build may run before it is stopped (0: 15m)"`
	TemplateBuildCPUMillis    int64         `yaml:"template_build_cpu_millis" env:"PADDOCK_TEMPLATE_BUILD_CPU_MILLIS" flag:"template-build-cpu-millis" help:"the CPU a template build's RUN steps may use, in millicores (0: 2000)"`
	TemplateBuildMemoryMB     int64         `yaml:"template_build_memory_mb" env:"PADDOCK_TEMPLATE_BUILD_MEMORY_MB" flag:"template-build-memory-mb" help:"the memory a template build's RUN steps may use, in MiB, without swap (0: 2048)"`
}

// HostsConfig is the machines orgs bring (none: they are registered
// through the API).
type HostsConfig struct{}

// HostTeardownConfig is how often idle machines are looked for.
type HostTeardownConfig struct {
	HostTeardownEvery time.Duration `yaml:"host_teardown_every" env:"PADDOCK_HOST_TEARDOWN_EVERY" flag:"host-teardown-every" help:"how often the machines orgs brought are checked for their idle teardown (0: 30s)"`
}

// LifecycleConfig is reconciliation.
type LifecycleConfig struct {
	// ReconcileConcurrency is how many runtimes a reconciliation handles
	// at once; 0 means 8.
	ReconcileConcurrency int `yaml:"reconcile_concurrency" env:"PADDOCK_RECONCILE_CONCURRENCY" parse:"runtimes" help:"how many runtimes a reconciliation handles at once (0: 8)"`
}

// SSHConfig is the SSH gateway.
type SSHConfig struct {
	// SSHListen is its address; "" means DefaultSSHListen, and "off"
	// turns it off. A busy port fails the start (two installations on one
	// host need two SSH ports).
	SSHListen string `yaml:"ssh_listen" env:"PADDOCK_SSH_LISTEN" help:"the SSH gateway's address (default 127.0.0.1:2222); off turns it off"`
	// SSHAddress is host:port as users reach it, when not the listen
	// address.
	SSHAddress string `yaml:"ssh_address" env:"PADDOCK_SSH_ADDRESS" help:"host:port of the SSH gateway as users reach it, when not its listen address"`
}

// PreviewConfig is the preview URLs of runtimes' ports.
type PreviewConfig struct {
	// PreviewDomain is the domain of preview URLs: port P of a runtime is
	// P-<runtime short id>.<PreviewDomain>. "" means localhost, which
	// browsers resolve to loopback by themselves; elsewhere point a
	// wildcard DNS record at the server.
	PreviewDomain string `yaml:"preview_domain" env:"PADDOCK_PREVIEW_DOMAIN" help:"the domain of preview URLs, P-<runtime short id>.<domain> (default localhost; elsewhere a wildcard DNS record)"`
	// PreviewScheme and PreviewPort are how users reach preview URLs when
	// a proxy in front terminates TLS or listens elsewhere: "https" and
	// "443" say so ("" means http and the listen port; "none" omits the
	// port).
	PreviewScheme string `yaml:"preview_scheme" env:"PADDOCK_PREVIEW_SCHEME" help:"http or https, as users reach preview URLs (default http)"`
	PreviewPort   string `yaml:"preview_port" env:"PADDOCK_PREVIEW_PORT" help:"the port of preview URLs as users reach them (default the listen port; none omits it)"`
}

// EventsConfig is the live event stream's section (GET /api/v1/events).
type EventsConfig struct {
	// EventsHeartbeat is how often a stream sends a comment line, which
	// keeps proxies from closing an idle stream and checks the stream's
	// credential again; 0 means 15s.
	EventsHeartbeat time.Duration `yaml:"events_heartbeat" env:"PADDOCK_EVENTS_HEARTBEAT" help:"how often an event stream sends a heartbeat and checks its credential again (0: 15s)"`
	// EventsStreamsPerUser caps the event streams one user (or a key
	// without one) holds open at once, across the replicas: a console
	// tab each; 0 means 8, negative no cap.
	EventsStreamsPerUser int `yaml:"events_streams_per_user" env:"PADDOCK_EVENTS_STREAMS_PER_USER" help:"concurrent event streams per user (0: 8; negative: no cap)"`
	// EventsEgressPerSecond bounds the egress decisions of one runtime
	// that the streams hear each second (the rest are counted in the next
	// one's suppressed; the audit log keeps every decision); 0 means 20,
	// negative no bound.
	EventsEgressPerSecond int `yaml:"events_egress_per_second" env:"PADDOCK_EVENTS_EGRESS_PER_SECOND" help:"egress decisions per runtime a second that event streams hear; the rest are counted (0: 20; negative: all)"`
}

// MetricsConfig is the metrics component's section; it has no settings
// yet.
type MetricsConfig struct{}

// HTTPConfig is the API's listener and what guards it: proxies in front,
// limits.
type HTTPConfig struct {
	Listen string `yaml:"listen" env:"PADDOCK_LISTEN" flag:"listen" help:"address to listen on"`
	// TrustedProxies are the reverse proxies in front of the server, as
	// CIDRs or addresses: only from them is TrustedProxyHeader believed
	// to name the client, for the per-address rate limit and the logs.
	// None (the default): the connection's peer is the client.
	TrustedProxies []string `yaml:"trusted_proxies" env:"PADDOCK_TRUSTED_PROXIES" help:"reverse proxies in front of the server, CIDRs or addresses, comma-separated, whose client header is believed (default none)"`
	// TrustedProxyHeader is the one header those proxies write the
	// client in: X-Forwarded-For (the default), Forwarded or X-Real-IP.
	// The others are the client's own and are never read.
	TrustedProxyHeader string `yaml:"trusted_proxy_header" env:"PADDOCK_TRUSTED_PROXY_HEADER" help:"the one header trusted proxies name the client in: X-Forwarded-For (default), Forwarded or X-Real-IP"`
	// E2BDomain, when set, serves the E2B-compatible surface by host as
	// E2B's cloud does: api.<E2BDomain> its REST API and
	// <port>-<sandbox id>.<E2BDomain> a sandbox's port, for the SDKs'
	// E2B_DOMAIN behind a TLS proxy with a wildcard certificate. The
	// surface is served at /e2b on the API's listener either way.
	E2BDomain string `yaml:"e2b_domain" env:"PADDOCK_E2B_DOMAIN" help:"serve the E2B-compatible API by host: api.<domain> and <port>-<sandbox id>.<domain> (default none: only at /e2b)"`
	// Limits: rate limits, caps on concurrent sessions, body sizes.
	Limits Limits `yaml:"limits"`
}

// Limits protect the server from any one caller; zero fields take the
// defaults, and a negative rate or cap turns it off.
type Limits struct {
	// Token buckets, in requests a second and a burst: one per credential
	// and one per client address. Over either: 429 with Retry-After.
	RatePerKey     float64 `yaml:"rate_per_key" env:"PADDOCK_RATE_PER_KEY" help:"requests a second per credential (0: 100; negative: no limit)"`
	BurstPerKey    int     `yaml:"burst_per_key" env:"PADDOCK_BURST_PER_KEY" help:"burst of requests per credential (0: 500)"`
	RatePerClient  float64 `yaml:"rate_per_client" env:"PADDOCK_RATE_PER_CLIENT" help:"requests a second per client address (0: 200; negative: no limit)"`
	BurstPerClient int     `yaml:"burst_per_client" env:"PADDOCK_BURST_PER_CLIENT" help:"burst of requests per client address (0: 1000)"`
	// Concurrent exec streams and terminals, per runtime and per user.
	ExecStreamsPerRuntime int `yaml:"exec_streams_per_runtime" env:"PADDOCK_EXEC_STREAMS_PER_RUNTIME" help:"concurrent exec streams per runtime (0: 32; negative: no cap)"`
	ExecStreamsPerUser    int `yaml:"exec_streams_per_user" env:"PADDOCK_EXEC_STREAMS_PER_USER" help:"concurrent exec streams per user (0: 64; negative: no cap)"`
	TerminalsPerRuntime   int `yaml:"terminals_per_runtime" env:"PADDOCK_TERMINALS_PER_RUNTIME" help:"concurrent terminals per runtime (0: 8; negative: no cap)"`
	TerminalsPerUser      int `yaml:"terminals_per_user" env:"PADDOCK_TERMINALS_PER_USER" help:"concurrent terminals per user (0: 16; negative: no cap)"`
	MCPRequestsPerUser    int `yaml:"mcp_requests_per_user" env:"PADDOCK_MCP_REQUESTS_PER_USER" help:"requests to /mcp in flight per user (0: 8; negative: no cap)"`
	// Request bodies: JSON, file uploads, capability bundles.
	JSONBodyBytes   int64 `yaml:"json_body_bytes" env:"PADDOCK_JSON_BODY_BYTES" help:"largest JSON request body in bytes (0: 1 MiB)"`
	UploadBodyBytes int64 `yaml:"upload_body_bytes" env:"PADDOCK_UPLOAD_BODY_BYTES" help:"largest file upload in bytes (0: 1 GiB)"`
	BundleBodyBytes int64 `yaml:"bundle_body_bytes" env:"PADDOCK_BUNDLE_BODY_BYTES" help:"largest capability bundle in bytes (0: 16 MiB)"`
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
	DirectAdd bool `yaml:"direct_add" env:"PADDOCK_MEMBERS_DIRECT_ADD" help:"org admins add existing users at once instead of inviting them (unknown addresses are still invited)"`
	// InvitationTTL is how long an invitation stays open; 0 means 7 days.
	InvitationTTL time.Duration `yaml:"invitation_ttl" env:"PADDOCK_MEMBERS_INVITATION_TTL" help:"how long an invitation stays open (0: 7 days)"`
}

// Egress configures the egress proxy and the networks of the proxy and open
// modes.
type Egress struct {
	// Disabled offers only the none mode: no networks, no firewall rules,
	// no proxy.
	Disabled bool `yaml:"disabled" env:"PADDOCK_EGRESS_DISABLED" help:"offer only the none network mode: no networks, firewall rules or proxy"`
	// ProxyNetwork and OpenNetwork name the Docker networks of the two
	// modes; they are created on start. "" (the default) names them after
	// the instance id, paddock-egress-<hash> and paddock-open-<hash>, so
	// each installation on a host has its own (one that has the networks
	// of earlier releases, EarlierProxyNetwork and EarlierOpenNetwork,
	// keeps them).
	ProxyNetwork string `yaml:"proxy_network" env:"PADDOCK_EGRESS_PROXY_NETWORK" help:"the Docker network of the proxy mode (default paddock-egress-<hash of the instance id>)"`
	OpenNetwork  string `yaml:"open_network" env:"PADDOCK_EGRESS_OPEN_NETWORK" help:"the Docker network of the open mode (default paddock-open-<hash of the instance id>)"`
	// ProxyPort is the egress proxy's port on the proxy network's gateway.
	ProxyPort int `yaml:"proxy_port" env:"PADDOCK_EGRESS_PROXY_PORT" help:"the egress proxy's port on the proxy network's gateway"`
	// Hosts maps names to addresses for the proxy, before any lookup:
	// for air-gapped installs (a local package mirror) and tests. Each
	// address is addr or addr:port ([v6]:port); the proxy opens it, even
	// private or loopback, for that name on that port only, or on 80 and
	// 443 when no port is given. Repeat an entry for more ports.
	Hosts map[string][]string `yaml:"hosts" env:"PADDOCK_EGRESS_HOSTS" parse:"hosts" help:"names the proxy resolves itself, name=addr[:port],… (no port: 80 and 443; repeat a name for more ports)"`
	// AllowInternal are the internal addresses and ranges (private,
	// link-local, …) that proxy sandboxes may reach: the egress guard
	// closes them otherwise, and a runtime's allow rule may name them only
	// once they are listed here. It never opens loopback, the host's own
	// addresses, its bridges' networks or the installation's networks.
	AllowInternal []string `yaml:"allow_internal" env:"PADDOCK_EGRESS_ALLOW_INTERNAL" help:"internal addresses and CIDRs proxy sandboxes may reach, comma-separated (never loopback or the host itself)"`
	// BrokerPorts are the ports on which tunnels to hosts of brokered
	// secrets are intercepted; default 443.
	BrokerPorts []int `yaml:"broker_ports" env:"PADDOCK_EGRESS_BROKER_PORTS" parse:"ports" help:"ports on which tunnels to hosts of brokered secrets are intercepted, comma-separated (default 443)"`
	// UpstreamCAFile holds extra CA certificates (PEM) the proxy trusts
	// when it calls brokered hosts itself.
	UpstreamCAFile string `yaml:"upstream_ca_file" env:"PADDOCK_EGRESS_UPSTREAM_CA_FILE" help:"extra CA certificates (PEM) the proxy trusts when it calls brokered hosts itself"`
	// Retention is how long egress decisions are kept.
	Retention time.Duration `yaml:"retention" env:"PADDOCK_EGRESS_RETENTION" help:"how long egress decisions are kept"`
}
