package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/config"
)

// TestServeHelpListsEverySetting: `paddock serve --help` names every
// setting's variable, file key and flag, and each flag's usage names its
// variable.
func TestServeHelpListsEverySetting(t *testing.T) {
	cmd := newServeCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, s := range config.Settings() {
		for _, n := range []string{s.Env, s.Key} {
			if n != "" && !strings.Contains(help, n) {
				t.Errorf("serve --help does not name %s", n)
			}
		}
		if s.Flag == "" {
			continue
		}
		f := cmd.Flags().Lookup(s.Flag)
		if f == nil || !strings.Contains(help, "--"+s.Flag) {
			t.Errorf("serve has no flag --%s", s.Flag)
			continue
		}
		if !strings.Contains(f.Usage, s.Help) || !strings.Contains(f.Usage, "(env "+s.Env+")") {
			t.Errorf("--%s: usage %q, want its help and variable", s.Flag, f.Usage)
		}
	}
	for _, want := range []string{"PADDOCK_EGRESS_PROXY_PORT, egress.proxy_port\n", "(default 3128)", "PADDOCK_SECRETS_KEY\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	if !strings.Contains(help, "PADDOCK_SSH_LISTEN, ssh_listen") {
		t.Errorf("serve --help lacks the SSH gateway's address:\n%s", help)
	}
}

// serveLoad parses args as serve's flags and loads the configuration
// serve would run with.
func serveLoad(t *testing.T, args ...string) (config.Config, error) {
	t.Helper()
	o := newServeOptions()
	cmd := &cobra.Command{}
	o.bind(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		return config.Config{}, err
	}
	return o.load(cmd)
}

// TestServePrecedence: a flag beats its variable, which beats the file,
// which beats the default, setting by setting; a flag given its default
// value still wins; the data dir's flag and variable pick the default file.
func TestServePrecedence(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	write := func(dir, yaml string) {
		if err := os.WriteFile(filepath.Join(dir, "paddock.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(dir, "listen: 127.0.0.1:7001\nidle_timeout: 20m\ndisk_mb: 2048\nwarm_pool: 2\nallowed_images: [file/*]\npull_images: false\n")
	write(other, "listen: 127.0.0.1:7002\n")
	t.Setenv("PADDOCK_DATA_DIR", other)
	t.Setenv("PADDOCK_IDLE_TIMEOUT", "30m")
	t.Setenv("PADDOCK_DISK_MB", "4096")
	t.Setenv("PADDOCK_WARM_POOL", "3")
	t.Setenv("PADDOCK_PULL_IMAGES", "")
	cfg, err := serveLoad(t, "--data-dir", dir, "--disk-mb", "8192", "--warm-pool", "0", "--allowed-images", "flag/*, x", "--pull-images")
	if err != nil {
		t.Fatal(err)
	}
	def := config.Default()
	for what, ok := range map[string]bool{
		"listen from the file in --data-dir":     cfg.Listen == "127.0.0.1:7001",
		"data dir from the flag":                 cfg.DataDir == dir,
		"idle timeout from the environment":      cfg.IdleTimeout == 30*time.Minute,
		"disk quota from the flag":               cfg.DiskMB == 8192,
		"warm pool from the flag at its default": cfg.WarmPool == 0,
		"allowed images from the flag":           slices.Equal(cfg.AllowedImages, []string{"flag/*", "x"}),
		"pull images from the bare flag":         cfg.PullImages,
		"log level from the default":             cfg.LogLevel == def.LogLevel,
		"max keepalive from the default":         cfg.MaxKeepalive == def.MaxKeepalive,
		"credit first slice from the default":    cfg.CreditFirstSlice == def.CreditFirstSlice,
		"image builds from the default":          slices.Equal(cfg.ImageBuilds, def.ImageBuilds),
	} {
		if !ok {
			t.Errorf("%s: %+v", what, cfg)
		}
	}

	// Without --data-dir, PADDOCK_DATA_DIR picks the file; --config
	// names another.
	if cfg, err := serveLoad(t); err != nil || cfg.Listen != "127.0.0.1:7002" || cfg.DataDir != other {
		t.Errorf("the data dir's file from the environment: listen %s, data dir %s, %v", cfg.Listen, cfg.DataDir, err)
	}
	if cfg, err := serveLoad(t, "--config", filepath.Join(dir, "paddock.yaml"), "--pull-images=false"); err != nil || cfg.Listen != "127.0.0.1:7001" || cfg.PullImages {
		t.Errorf("--config: listen %s, pull images %v, %v", cfg.Listen, cfg.PullImages, err)
	}
}

// TestServeDatabaseFlag: --database names the store, a PostgreSQL URL
// included, over PADDOCK_STORE.
func TestServeDatabaseFlag(t *testing.T) {
	t.Setenv("PADDOCK_DATA_DIR", t.TempDir())
	t.Setenv("PADDOCK_STORE", "sqlite:/from/env.db")
	const dsn = "postgres://paddock@127.0.0.1:5432/paddock?sslmode=disable"
	if cfg, err := serveLoad(t, "--database", dsn); err != nil || cfg.Store != dsn {
		t.Errorf("--database %s: store %q, %v", dsn, cfg.Store, err)
	}
}

// TestServeFlagErrors: a flag's value is read as its variable's is, and a
// bad one is refused when the flags are parsed, naming the flag.
func TestServeFlagErrors(t *testing.T) {
	t.Setenv("PADDOCK_DATA_DIR", t.TempDir())
	for args, want := range map[string]string{
		"--idle-timeout soon":   `invalid argument "soon" for "--idle-timeout" flag: time: invalid duration "soon"`,
		"--disk-mb lots":        `invalid argument "lots" for "--disk-mb" flag: strconv.ParseInt: parsing "lots": invalid syntax`,
		"--pull-images=maybe":   `invalid argument "maybe" for "--pull-images" flag: strconv.ParseBool: parsing "maybe": invalid syntax`,
		"--new-org-credits lot": `invalid argument "lot" for "--new-org-credits" flag: strconv.ParseFloat: parsing "lot": invalid syntax`,
		"--warm-pool 100":       "warm pool size 100 is not between 0 and 64",
	} {
		if _, err := serveLoad(t, strings.Fields(args)...); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", args, err, want)
		}
	}
}
