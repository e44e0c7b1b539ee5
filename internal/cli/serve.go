package cli

import (
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/server"
)

// newServeCmd is `paddock serve`: flags beat PADDOCK_* environment
// variables, which beat the config file, which beats the defaults.
func newServeCmd() *cobra.Command {
	def := config.Default()
	var (
		file          string
		flags         config.Config
		allowedImages string
		imageBuilds   string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the paddock server",
		Long: `Run the paddock server: the API on --listen, SQLite in --data-dir, and
the local Docker engine as the sandbox provider. The first start prints an
admin API key once.

Settings come from flags, then PADDOCK_* environment variables (PADDOCK_LISTEN,
PADDOCK_DATA_DIR, PADDOCK_PROVIDER, PADDOCK_SHIM_PATH, PADDOCK_DEFAULT_IMAGE,
PADDOCK_DOCKER_HOST, PADDOCK_RUN_DIR, PADDOCK_BOOTSTRAP_KEY, PADDOCK_LOG_LEVEL,
PADDOCK_IDLE_TIMEOUT, PADDOCK_PULL_IMAGES, PADDOCK_CREDIT_RATE_CPU,
PADDOCK_CREDIT_RATE_MEMORY, PADDOCK_CREDIT_PROVIDER_RATES,
PADDOCK_CREDIT_FIRST_SLICE, PADDOCK_SETTLE_INTERVAL, PADDOCK_NEW_ORG_CREDITS,
PADDOCK_ALLOWED_IMAGES, PADDOCK_DISK_MB, PADDOCK_MAX_DISK_MB),
then the YAML file given by --config (default <data-dir>/paddock.yaml when it
exists).

Compute costs credits: --credit-rate-cpu micro-credits per core-second plus
--credit-rate-memory per GiB-second (zero rates make it free). A start
prepays --credit-first-slice of compute and is refused (402) when the org
cannot pay for it; running compute is charged every --settle-interval. A new
org starts with --new-org-credits; 'paddock credits grant' adds more.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := config.Default()
			// The data dir decides where the default config file is, so
			// find it first from the flag or the environment.
			dataDir := def.DataDir
			if v, ok := os.LookupEnv("PADDOCK_DATA_DIR"); ok && v != "" {
				dataDir = v
			}
			if cmd.Flags().Changed("data-dir") {
				dataDir = flags.DataDir
			}
			if file != "" {
				if err := cfg.LoadFile(file, true); err != nil {
					return err
				}
			} else if err := cfg.LoadFile(dataDir+"/paddock.yaml", false); err != nil {
				return err
			}
			if err := cfg.LoadEnv(os.LookupEnv); err != nil {
				return err
			}
			fl := cmd.Flags()
			set := func(name string, dst *string, v string) {
				if fl.Changed(name) {
					*dst = v
				}
			}
			set("listen", &cfg.Listen, flags.Listen)
			set("data-dir", &cfg.DataDir, flags.DataDir)
			set("provider", &cfg.Provider, flags.Provider)
			set("shim-path", &cfg.ShimPath, flags.ShimPath)
			set("default-image", &cfg.DefaultImage, flags.DefaultImage)
			set("image-builder", &cfg.ImageBuilder, flags.ImageBuilder)
			if fl.Changed("image-builds") {
				cfg.ImageBuilds = config.SplitList(imageBuilds)
			}
			set("log-level", &cfg.LogLevel, flags.LogLevel)
			set("log-format", &cfg.LogFormat, flags.LogFormat)
			set("run-dir", &cfg.RunDir, flags.RunDir)
			if fl.Changed("idle-timeout") {
				cfg.IdleTimeout = flags.IdleTimeout
			}
			if fl.Changed("pull-images") {
				cfg.PullImages = flags.PullImages
			}
			if fl.Changed("writable-root-unbounded") {
				cfg.WritableRootUnbounded = flags.WritableRootUnbounded
			}
			if fl.Changed("allowed-images") {
				cfg.AllowedImages = config.SplitList(allowedImages)
			}
			set("credit-provider-rates", &cfg.CreditProviderRates, flags.CreditProviderRates)
			for name, p := range map[string]struct{ dst, src *int64 }{
				"credit-rate-cpu":    {&cfg.CreditRateCPU, &flags.CreditRateCPU},
				"credit-rate-memory": {&cfg.CreditRateMemory, &flags.CreditRateMemory},
				"disk-mb":            {&cfg.DiskMB, &flags.DiskMB},
				"max-disk-mb":        {&cfg.MaxDiskMB, &flags.MaxDiskMB},
			} {
				if fl.Changed(name) {
					*p.dst = *p.src
				}
			}
			if fl.Changed("new-org-credits") {
				cfg.NewOrgCredits = flags.NewOrgCredits
			}
			if fl.Changed("warm-pool") {
				cfg.WarmPool = flags.WarmPool
			}
			if fl.Changed("warm-pool-running") {
				cfg.WarmPoolRunning = flags.WarmPoolRunning
			}
			for name, p := range map[string]struct{ dst, src *time.Duration }{
				"credit-first-slice": {&cfg.CreditFirstSlice, &flags.CreditFirstSlice},
				"settle-interval":    {&cfg.SettleInterval, &flags.SettleInterval},
				"max-keepalive":      {&cfg.MaxKeepalive, &flags.MaxKeepalive},
				"archive-after":      {&cfg.ArchiveAfter, &flags.ArchiveAfter},
			} {
				if fl.Changed(name) {
					*p.dst = *p.src
				}
			}
			if err := cfg.Validate(); err != nil {
				return err
			}

			var level slog.Level
			_ = level.UnmarshalText([]byte(cfg.LogLevel))
			logger := logs.New(cmd.ErrOrStderr(), cfg.LogFormat, level, logs.NewBook())

			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return server.Run(ctx, cfg, logger, cmd.OutOrStdout())
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	f := cmd.Flags()
	f.StringVar(&file, "config", "", "YAML config file (default <data-dir>/paddock.yaml if present)")
	f.StringVar(&flags.Listen, "listen", def.Listen, "address to listen on")
	f.StringVar(&flags.DataDir, "data-dir", def.DataDir, "directory for the database and agent sockets")
	f.StringVar(&flags.Provider, "provider", def.Provider, "sandbox provider: docker or fake")
	f.StringVar(&flags.ShimPath, "shim-path", "", "path to the static paddock-shim binary (default: next to paddock, then PATH)")
	f.StringVar(&flags.DefaultImage, "default-image", def.DefaultImage, "image for runtimes that name none")
	f.StringVar(&flags.LogLevel, "log-level", def.LogLevel, "debug, info, warn or error")
	f.StringVar(&flags.LogFormat, "log-format", def.LogFormat, "json (one object per line, with request, runtime and sandbox ids) or text")
	f.StringVar(&flags.RunDir, "run-dir", "", "directory for agent sockets (default <data-dir>/run when short enough)")
	f.DurationVar(&flags.IdleTimeout, "idle-timeout", def.IdleTimeout, "default idle timeout of a runtime")
	f.BoolVar(&flags.PullImages, "pull-images", def.PullImages, "pull images that are not present locally")
	f.StringVar(&flags.ImageBuilder, "image-builder", "", "script that builds sandbox images (scripts/build-images.sh): the server builds --image-builds with it in the background once it serves")
	f.StringVar(&imageBuilds, "image-builds", strings.Join(def.ImageBuilds, ","), "the image builder's targets to build in the background, in order, comma-separated")
	f.StringVar(&allowedImages, "allowed-images", strings.Join(def.AllowedImages, ","), "images runtimes may use: exact references or prefixes ending in '*', comma-separated (the default image is always allowed)")
	f.BoolVar(&flags.WritableRootUnbounded, "writable-root-unbounded", false, "allow writable roots (rootfs: writable) on an engine that cannot bound their size: their writes are outside any quota")
	f.Int64Var(&flags.DiskMB, "disk-mb", def.DiskMB, "a workspace's disk quota in MiB when its runtime names none")
	f.Int64Var(&flags.MaxDiskMB, "max-disk-mb", def.MaxDiskMB, "the largest disk quota a runtime may ask for, in MiB")
	f.Int64Var(&flags.CreditRateCPU, "credit-rate-cpu", def.CreditRateCPU, "micro-credits per core-second of compute")
	f.Int64Var(&flags.CreditRateMemory, "credit-rate-memory", def.CreditRateMemory, "micro-credits per GiB-second of compute")
	f.StringVar(&flags.CreditProviderRates, "credit-provider-rates", "", "per-provider rates, name=cpu:memory,… (override the two above)")
	f.DurationVar(&flags.CreditFirstSlice, "credit-first-slice", def.CreditFirstSlice, "compute a start or resume prepays")
	f.DurationVar(&flags.SettleInterval, "settle-interval", def.SettleInterval, "how often running compute is charged")
	f.Float64Var(&flags.NewOrgCredits, "new-org-credits", def.NewOrgCredits, "credits a new org starts with")
	f.DurationVar(&flags.MaxKeepalive, "max-keepalive", def.MaxKeepalive, "the longest one keepalive may extend a sandbox's window")
	f.DurationVar(&flags.ArchiveAfter, "archive-after", def.ArchiveAfter, "archive runtimes paused this long (0: never)")
	f.IntVar(&flags.WarmPool, "warm-pool", def.WarmPool, "warm sandboxes to keep ready for runtimes of the default image and resources")
	f.BoolVar(&flags.WarmPoolRunning, "warm-pool-running", def.WarmPoolRunning, "keep the warm sandboxes running with their agent link open (a start is a transaction) instead of paused")
	return cmd
}

// serverUsage is cobra's usage template without the client's global flags
// (--url, --api-key, --output, --config): the commands that run the server
// or work on its data have no use for them.
const serverUsage = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// newAdminCmd is `paddock admin`: operations on the server's own data
// directory, without a running server or an API key.
func newAdminCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Work on the server's data directory directly (no server or key needed)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.SetUsageTemplate(serverUsage)
	var dataDir, name string
	create := &cobra.Command{
		Use:   "create-key",
		Short: "Create a new installation admin API key and print it once",
		Long: `Create a new installation admin API key in the server's database and print it
once. Use it when the key printed at the first start was lost. It works on the
data directory while the server is stopped (and while it runs).`,
		Example: `  paddock admin create-key --data-dir ./data`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return server.CreateAdminKey(cmd.Context(), adminDataDir(cmd, dataDir), name, cmd.OutOrStdout())
		},
	}
	create.SetUsageTemplate(serverUsage)
	create.Flags().StringVar(&dataDir, "data-dir", config.Default().DataDir, "the server's data directory (env PADDOCK_DATA_DIR)")
	create.Flags().StringVar(&name, "name", "admin (created offline)", "a name for the key")
	cmd.AddCommand(create, newRotateSecretsKeyCmd())
	return cmd
}

// adminDataDir is the data directory an admin command works on: --data-dir,
// else PADDOCK_DATA_DIR, else the default.
func adminDataDir(cmd *cobra.Command, flag string) string {
	if cmd.Flags().Changed("data-dir") {
		return flag
	}
	if v, ok := os.LookupEnv("PADDOCK_DATA_DIR"); ok && v != "" {
		return v
	}
	return config.Default().DataDir
}

// newRotateSecretsKeyCmd is `paddock admin rotate-secrets-key`.
func newRotateSecretsKeyCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "rotate-secrets-key",
		Short: "Seal every secret again under a new key",
		Long: `Seal every secret again under a new key, in one transaction.

With the key in <data-dir>/secrets.key (the default), a new key is written to
secrets.key.next, every secret is re-encrypted, and the new key replaces
secrets.key. Running servers pick it up by themselves. A rotation cut short is
finished by running the command again.

With the key in PADDOCK_SECRETS_KEY, give the new one in
PADDOCK_SECRETS_NEW_KEY (head -c 32 /dev/urandom | base64), then restart every
server with PADDOCK_SECRETS_KEY set to it.`,
		Example: `  paddock admin rotate-secrets-key --data-dir ./data
  PADDOCK_SECRETS_NEW_KEY=$(head -c 32 /dev/urandom | base64) paddock admin rotate-secrets-key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return server.RotateSecretsKey(cmd.Context(), adminDataDir(cmd, dataDir), os.Getenv("PADDOCK_SECRETS_KEY"), os.Getenv("PADDOCK_SECRETS_NEW_KEY"), cmd.OutOrStdout())
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	cmd.Flags().StringVar(&dataDir, "data-dir", config.Default().DataDir, "the server's data directory (env PADDOCK_DATA_DIR)")
	return cmd
}
