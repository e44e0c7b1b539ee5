package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// TestEveryFieldIsTagged: every field of every section, read here apart
// from Settings' walk, carries yaml, env and help tags (yaml:"-" for an
// environment-only setting, env:"-" for a file-only one), unless it is a
// group of settings (a struct with no variable of its own).
func TestEveryFieldIsTagged(t *testing.T) {
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := path + "." + f.Name
			_, hasEnv := f.Tag.Lookup("env")
			if !hasEnv && f.Type.Kind() == reflect.Struct {
				if f.Tag.Get("yaml") == "" {
					t.Errorf("%s: a group of settings without a yaml key", name)
				}
				check(name, f.Type)
				continue
			}
			for _, tag := range []string{"yaml", "env", "help"} {
				if f.Tag.Get(tag) == "" {
					t.Errorf("%s has no %s tag", name, tag)
				}
			}
			if f.Tag.Get("yaml") == "-" && f.Tag.Get("env") == "-" {
				t.Errorf("%s is read from neither the file nor the environment", name)
			}
		}
	}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.Anonymous || f.Tag.Get("section") == "" || f.Tag.Get("yaml") != ",inline" {
			t.Errorf("Config.%s is not a section embedded inline with a section name", f.Name)
		}
		check(f.Name, f.Type)
	}
}

// TestSettingsNames: the variables, keys and flags are unique and well
// formed, each help is one line, and every variable and flag that paddock
// had before settings came from tags is still there, under its name.
func TestSettingsNames(t *testing.T) {
	envRE := regexp.MustCompile(`^PADDOCK_[A-Z0-9_]+$`)
	seen := map[string]bool{}
	var envs, flags []string
	for _, s := range Settings() {
		if s.Env != "" && !envRE.MatchString(s.Env) {
			t.Errorf("%s: variable %q", s.Key, s.Env)
		}
		if s.Help == "" || strings.Contains(s.Help, "\n") {
			t.Errorf("%s: help %q is not one line", s.Env, s.Help)
		}
		for _, n := range []string{s.Env, "key " + s.Key, "flag " + s.Flag} {
			if n != "" && n != "key " && n != "flag " && seen[n] {
				t.Errorf("%s is used twice", n)
			}
			seen[n] = true
		}
		if s.Env != "" {
			envs = append(envs, s.Env)
		}
		if s.Flag != "" {
			flags = append(flags, s.Flag)
		}
	}
	for _, env := range strings.Fields(`PADDOCK_LISTEN PADDOCK_DATA_DIR PADDOCK_PROVIDER PADDOCK_STORE
		PADDOCK_SHIM_PATH PADDOCK_DEFAULT_IMAGE PADDOCK_DEFAULT_HARNESS PADDOCK_IMAGE_BUILDER PADDOCK_DOCKER_HOST
		PADDOCK_RUN_DIR PADDOCK_BOOTSTRAP_KEY PADDOCK_LOG_LEVEL PADDOCK_LOG_FORMAT PADDOCK_INSTANCE_ID
		PADDOCK_SIGN_IN_DOMAIN PADDOCK_SSH_LISTEN PADDOCK_SSH_ADDRESS PADDOCK_PREVIEW_DOMAIN PADDOCK_E2B_DOMAIN PADDOCK_PREVIEW_SCHEME
		PADDOCK_PREVIEW_PORT PADDOCK_CREDIT_PROVIDER_RATES PADDOCK_IDLE_TIMEOUT PADDOCK_CREDIT_FIRST_SLICE
		PADDOCK_SETTLE_INTERVAL PADDOCK_MAX_KEEPALIVE PADDOCK_ARCHIVE_AFTER PADDOCK_CREDIT_RATE_CPU
		PADDOCK_CREDIT_RATE_MEMORY PADDOCK_DISK_MB PADDOCK_MAX_DISK_MB PADDOCK_NEW_ORG_CREDITS PADDOCK_PROVIDERS
		PADDOCK_RECONCILE_CONCURRENCY PADDOCK_WARM_POOL_RUNNING PADDOCK_WARM_POOL PADDOCK_ALLOWED_IMAGES
		PADDOCK_TRUSTED_PROXIES PADDOCK_IMAGE_BUILDS PADDOCK_TRUSTED_PROXY_HEADER PADDOCK_EGRESS_PROXY_NETWORK
		PADDOCK_EGRESS_OPEN_NETWORK PADDOCK_EGRESS_UPSTREAM_CA_FILE PADDOCK_EGRESS_PROXY_PORT PADDOCK_EGRESS_RETENTION
		PADDOCK_SECRETS_KEY PADDOCK_SESSION_KEY PADDOCK_CHALLENGE_TTL PADDOCK_SESSION_TTL
		PADDOCK_MEMBERS_INVITATION_TTL PADDOCK_RATE_PER_KEY PADDOCK_RATE_PER_CLIENT PADDOCK_BURST_PER_KEY
		PADDOCK_BURST_PER_CLIENT PADDOCK_EXEC_STREAMS_PER_RUNTIME PADDOCK_EXEC_STREAMS_PER_USER
		PADDOCK_TERMINALS_PER_RUNTIME PADDOCK_TERMINALS_PER_USER PADDOCK_JSON_BODY_BYTES PADDOCK_UPLOAD_BODY_BYTES
		PADDOCK_BUNDLE_BODY_BYTES PADDOCK_EGRESS_DISABLED PADDOCK_EGRESS_HOSTS PADDOCK_EGRESS_ALLOW_INTERNAL
		PADDOCK_EGRESS_BROKER_PORTS PADDOCK_WRITABLE_ROOT_UNBOUNDED PADDOCK_MEMBERS_DIRECT_ADD PADDOCK_PULL_IMAGES`) {
		if !slices.Contains(envs, env) {
			t.Errorf("%s is no longer read", env)
		}
	}
	for _, flag := range strings.Fields(`listen data-dir provider shim-path default-image log-level log-format
		run-dir idle-timeout pull-images image-builder image-builds allowed-images writable-root-unbounded disk-mb
		max-disk-mb credit-rate-cpu credit-rate-memory credit-provider-rates credit-first-slice settle-interval
		new-org-credits max-keepalive archive-after warm-pool warm-pool-running database`) {
		if !slices.Contains(flags, flag) {
			t.Errorf("--%s is gone", flag)
		}
	}
}

// sample is a value for s's variable unlike its default, and how Format
// writes it back.
func sample(t *testing.T, s Setting, def *Config) (value, formatted string) {
	switch {
	case s.Env == "PADDOCK_PROVIDERS":
		return "a=fake, b=docker:runsc", "a=fake,b=docker:runsc"
	case s.Env == "PADDOCK_EGRESS_HOSTS":
		return "h.test=127.0.0.1:80,h.test=10.0.0.1", "h.test=10.0.0.1,h.test=127.0.0.1:80"
	case s.Env == "PADDOCK_EGRESS_BROKER_PORTS":
		return "443, 8443", "443,8443"
	}
	switch s.Kind() {
	case "string":
		return "sample-" + s.Env, "sample-" + s.Env
	case "bool":
		b := fmt.Sprint(s.Format(def) != "true")
		return b, b
	case "int", "int64":
		return "7", "7"
	case "float64":
		return "2.5", "2.5"
	case "duration":
		return "7m", "7m0s"
	case "list":
		return "a, ,b", "a,b"
	}
	t.Fatalf("%s: no sample for a %q", s.Env, s.Kind())
	return "", ""
}

// TestEachVariableSetsItsField is a table over every variable, derived
// from the tags: set alone, it sets its own field and no other.
func TestEachVariableSetsItsField(t *testing.T) {
	def := Default()
	for _, s := range Settings() {
		if s.Env == "" {
			continue
		}
		t.Run(s.Env, func(t *testing.T) {
			value, want := sample(t, s, &def)
			c := Default()
			if err := c.LoadEnv(func(k string) (string, bool) { return value, k == s.Env }); err != nil {
				t.Fatal(err)
			}
			if got := s.Format(&c); got != want || got == s.Format(&def) {
				t.Fatalf("%s=%q: field %q, want %q (default %q)", s.Env, value, got, want, s.Format(&def))
			}
			for _, o := range Settings() {
				if o.Env != s.Env && o.Format(&c) != o.Format(&def) {
					t.Errorf("%s also set %s to %q", s.Env, o.Env, o.Format(&c))
				}
			}
		})
	}
}

// TestLoadEnvKinds: each kind of value reads as it always has, with the
// same error for a bad value, and an empty variable counts as unset.
func TestLoadEnvKinds(t *testing.T) {
	for _, tc := range []struct {
		env, value string
		check      func(c Config) bool
		err        string
	}{
		{"PADDOCK_LISTEN", "", func(c Config) bool { return c.Listen == "127.0.0.1:8080" }, ""},
		{"PADDOCK_PULL_IMAGES", "0", func(c Config) bool { return !c.PullImages }, ""},
		{"PADDOCK_PULL_IMAGES", "nah", nil, `PADDOCK_PULL_IMAGES: strconv.ParseBool: parsing "nah": invalid syntax`},
		{"PADDOCK_WARM_POOL", "3", func(c Config) bool { return c.WarmPool == 3 }, ""},
		{"PADDOCK_WARM_POOL", "x", nil, `PADDOCK_WARM_POOL: strconv.Atoi: parsing "x": invalid syntax`},
		{"PADDOCK_JSON_BODY_BYTES", "2048", func(c Config) bool { return c.Limits.JSONBodyBytes == 2048 }, ""},
		{"PADDOCK_DISK_MB", "0x10", nil, `PADDOCK_DISK_MB: strconv.ParseInt: parsing "0x10": invalid syntax`},
		{"PADDOCK_RATE_PER_KEY", "-1", func(c Config) bool { return c.Limits.RatePerKey == -1 }, ""},
		{"PADDOCK_NEW_ORG_CREDITS", "many", nil, `PADDOCK_NEW_ORG_CREDITS: strconv.ParseFloat: parsing "many": invalid syntax`},
		{"PADDOCK_MEMBERS_INVITATION_TTL", "36h", func(c Config) bool { return c.Members.InvitationTTL == 36*time.Hour }, ""},
		{"PADDOCK_IDLE_TIMEOUT", "soon", nil, `PADDOCK_IDLE_TIMEOUT: time: invalid duration "soon"`},
		{"PADDOCK_ALLOWED_IMAGES", " a/*, b ,", func(c Config) bool { return slices.Equal(c.AllowedImages, []string{"a/*", "b"}) }, ""},
		{"PADDOCK_RECONCILE_CONCURRENCY", "0", func(c Config) bool { return c.ReconcileConcurrency == 0 }, ""},
		{"PADDOCK_RECONCILE_CONCURRENCY", "-1", nil, `PADDOCK_RECONCILE_CONCURRENCY: want a number of runtimes, not "-1"`},
		{"PADDOCK_PROVIDERS", "docker, gvisor=docker:runsc", func(c Config) bool {
			return slices.Equal(c.Providers, []ProviderConfig{{Name: "docker", Kind: "docker"}, {Name: "gvisor", Kind: "docker", Runtime: "runsc"}})
		}, ""},
		{"PADDOCK_PROVIDERS", "=docker", nil, `PADDOCK_PROVIDERS: provider "=docker": want name=kind[:runtime]`},
		{"PADDOCK_EGRESS_HOSTS", "a=1.2.3.4,a=1.2.3.4:8080", func(c Config) bool {
			return reflect.DeepEqual(c.Egress.Hosts, map[string][]string{"a": {"1.2.3.4", "1.2.3.4:8080"}})
		}, ""},
		{"PADDOCK_EGRESS_HOSTS", "a=", nil, `PADDOCK_EGRESS_HOSTS: "a=" is not name=address or name=address:port`},
		{"PADDOCK_EGRESS_BROKER_PORTS", "443,https", nil, `PADDOCK_EGRESS_BROKER_PORTS: "https" is not a port`},
		{"PADDOCK_SECRETS_KEY", "k", func(c Config) bool { return c.SecretsKey == "k" }, ""},
	} {
		c := Default()
		err := c.LoadEnv(func(k string) (string, bool) { return tc.value, k == tc.env })
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s=%q: error %v, want %s", tc.env, tc.value, err, tc.err)
		case tc.err != "" && !reflect.DeepEqual(c, Default()):
			t.Errorf("%s=%q: a refused value changed the config", tc.env, tc.value)
		case tc.err == "" && err != nil:
			t.Errorf("%s=%q: %v", tc.env, tc.value, err)
		case tc.err == "" && !tc.check(c):
			t.Errorf("%s=%q: read wrong: %+v", tc.env, tc.value, c)
		}
	}
}

// TestFileKeys: the sections are inline, so the file's keys are flat as
// before, and a file naming a key of each section loads into it.
func TestFileKeys(t *testing.T) {
	b, err := yaml.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range Settings() {
		if s.Key != "" {
			want[strings.Split(s.Key, ".")[0]] = true
		}
	}
	for k := range top {
		if !want[k] {
			t.Errorf("the file has a key %q no setting names", k)
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("keys missing from the file: %v", want)
	}
	file := filepath.Join(t.TempDir(), "paddock.yaml")
	if err := os.WriteFile(file, []byte("listen: 127.0.0.1:1\ndata_dir: /d\nstore: sqlite:/x.db\ndisk_mb: 99\n"+
		"egress:\n  proxy_port: 1\n  hosts:\n    a: [1.2.3.4]\nlimits:\n  rate_per_key: 3\nssh_listen: \"off\"\n"+
		"warm_pools:\n  - image: i\n    size: 2\n  - image: j\n    min: 1\n    max: 4\nwarm_pool_memory_ceiling_mb: 4096\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile(file, true); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:1" || c.DataDir != "/d" || c.Store != "sqlite:/x.db" || c.DiskMB != 99 || c.Egress.ProxyPort != 1 ||
		c.Egress.Hosts["a"][0] != "1.2.3.4" || c.Limits.RatePerKey != 3 || c.SSHListen != "off" || c.WarmPools[0] != (WarmPool{Image: "i", Size: 2}) ||
		c.WarmPools[1] != (WarmPool{Image: "j", Min: 1, Max: 4}) || c.WarmPoolMemoryCeilingMB != 4096 {
		t.Fatalf("from the file: %+v", c)
	}
	if err := os.WriteFile(file, []byte("secrets_key: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(file, true); err == nil {
		t.Fatal("the file set an environment-only setting")
	}
}

// TestSection: each component's name gives a pointer to its section of
// the config, through which it reads and writes; every setting lies in
// the section it names.
func TestSection(t *testing.T) {
	c := Default()
	want := map[string]any{
		"server": &c.ServerConfig, "http": &c.HTTPConfig, "store": &c.StoreConfig, "access": &c.AccessConfig, "providers": &c.ProvidersConfig,
		"egress": &c.EgressConfig, "secrets": &c.SecretsConfig, "runtime": &c.RuntimeConfig, "ledger": &c.LedgerConfig,
		"bindings": &c.BindingsConfig, "sessions": &c.SessionsConfig, "tasks": &c.TasksConfig, "worlds": &c.WorldsConfig, "snapshots": &c.SnapshotsConfig, "workflows": &c.WorkflowsConfig, "template_builds": &c.TemplateBuildsConfig, "instance": &c.InstanceConfig, "hosts": &c.HostsConfig, "host-teardown": &c.HostTeardownConfig, "lifecycle": &c.LifecycleConfig,
		"ssh": &c.SSHConfig, "preview": &c.PreviewConfig, "events": &c.EventsConfig, "metrics": &c.MetricsConfig,
	}
	if names := SectionNames(); len(names) != len(want) {
		t.Fatalf("sections %v, want %d", names, len(want))
	}
	for name, p := range want {
		if got := c.Section(name); got != p {
			t.Errorf("Section(%q) = %T %p, want %T %p", name, got, got, p, p)
		}
	}
	c.Section("ssh").(*SSHConfig).SSHListen = "off"
	if c.SSHListen != "off" {
		t.Fatal("a write through the section did not reach the config")
	}
	if got := c.Section("nope"); got != nil {
		t.Fatalf("Section(nope) = %v", got)
	}
	for _, s := range Settings() {
		sec := reflect.ValueOf(c.Section(s.Section)).Elem()
		if !sec.IsValid() || sec.Type() != reflect.TypeFor[Config]().Field(s.index[0]).Type {
			t.Errorf("%s is in section %q, which does not hold it", s.Env, s.Section)
		}
	}
}

// TestReferenceUpToDate fails when docs/CONFIG.md is not what the tags
// generate (go generate ./internal/config writes it), and checks that it
// lists every setting.
func TestReferenceUpToDate(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", ReferencePath))
	if err != nil {
		t.Fatalf("%v; run go generate ./internal/config", err)
	}
	if !bytes.Equal(committed, Reference()) {
		t.Fatalf("%s is stale; run go generate ./internal/config", ReferencePath)
	}
	for _, s := range Settings() {
		for _, n := range []string{s.Env, s.Key, "--" + s.Flag} {
			if n != "" && n != "--" && !bytes.Contains(committed, []byte("`"+n+"`")) {
				t.Errorf("%s does not list %s", ReferencePath, n)
			}
		}
	}
	for _, name := range SectionNames() {
		if !bytes.Contains(committed, []byte("\n## "+name+"\n")) {
			t.Errorf("%s has no section %s", ReferencePath, name)
		}
	}
}
