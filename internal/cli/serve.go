package cli

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/store/storecopy"
)

// newServeCmd is `paddock serve`: flags beat PADDOCK_* environment
// variables, which beat the config file, which beats the defaults. Its
// flags and the settings its help lists are generated from config.Settings.
func newServeCmd() *cobra.Command {
	o := newServeOptions()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the paddock server",
		Long: `Run the paddock server: the API on --listen, SQLite in --data-dir, and
the local Docker engine as the sandbox provider. The first start prints an
admin API key once.

Settings come from flags, then PADDOCK_* environment variables, then the YAML
file given by --config (default <data-dir>/paddock.yaml when it exists), then
the defaults. Every setting is listed below and in docs/CONFIG.md.

Compute costs credits: --credit-rate-cpu micro-credits per core-second plus
--credit-rate-memory per GiB-second (zero rates make it free). A start
prepays --credit-first-slice of compute and is refused (402) when the org
cannot pay for it; running compute is charged every --settle-interval. A new
org starts with --new-org-credits; 'paddock credits grant' adds more.

` + settingsHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.load(cmd)
			if err != nil {
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
	o.bind(cmd)
	return cmd
}

// serveOptions are serve's flags: the config file, and a Config that the
// flag of each setting that has one writes into.
type serveOptions struct {
	file  string
	flags config.Config
}

func newServeOptions() *serveOptions { return &serveOptions{flags: config.Default()} }

// bind adds --config and a flag for each setting that names one, bound to
// its field in o.flags and shown with its default and its variable.
func (o *serveOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.file, "config", "", "YAML config file (default <data-dir>/paddock.yaml if present)")
	for _, s := range config.Settings() {
		if s.Flag == "" {
			continue
		}
		fl := f.VarPF(settingFlag{s, &o.flags}, s.Flag, "", s.Help+" (env "+s.Env+")")
		if s.Kind() == "bool" {
			fl.NoOptDefVal = "true"
		}
	}
}

// load is the configuration serve runs with: the defaults, the file, the
// environment, then the flags given, validated.
func (o *serveOptions) load(cmd *cobra.Command) (config.Config, error) {
	fl := cmd.Flags()
	cfg := config.Default()
	// The data dir decides where the default config file is, so find it
	// first from the flag or the environment.
	dataDir := cfg.DataDir
	if v, ok := os.LookupEnv("PADDOCK_DATA_DIR"); ok && v != "" {
		dataDir = v
	}
	if fl.Changed("data-dir") {
		dataDir = o.flags.DataDir
	}
	if o.file != "" {
		if err := cfg.LoadFile(o.file, true); err != nil {
			return cfg, err
		}
	} else if err := cfg.LoadFile(dataDir+"/paddock.yaml", false); err != nil {
		return cfg, err
	}
	if err := cfg.LoadEnv(os.LookupEnv); err != nil {
		return cfg, err
	}
	for _, s := range config.Settings() {
		if s.Flag != "" && fl.Changed(s.Flag) {
			s.Copy(&cfg, &o.flags)
		}
	}
	return cfg, cfg.Validate()
}

// settingFlag is the flag of a setting: it reads its text as the
// setting's variable is read, into the setting's field of c.
type settingFlag struct {
	s config.Setting
	c *config.Config
}

func (f settingFlag) String() string     { return f.s.Format(f.c) }
func (f settingFlag) Set(v string) error { return f.s.Set(f.c, v) }

// Type is the value's name in --help; a list is written as a string.
func (f settingFlag) Type() string {
	if k := f.s.Kind(); k != "list" {
		return k
	}
	return "string"
}

// settingsHelp lists every setting by section: its variable, its key in
// the config file and its flag, then its help and default.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString("Settings (environment variable, config file key, flag):\n")
	section, def := "", config.Default()
	for _, s := range config.Settings() {
		if s.Section != section {
			section = s.Section
			fmt.Fprintf(&b, "\n%s\n", section)
		}
		names := []string{s.Env, s.Key}
		if s.Flag != "" {
			names = append(names, "--"+s.Flag)
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
		help := s.Help
		if d := s.Format(&def); d != "" {
			help += " (default " + d + ")"
		}
		fmt.Fprintf(&b, "  %s\n      %s\n", strings.Join(names, ", "), help)
	}
	return strings.TrimSuffix(b.String(), "\n")
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
	var dataDir, database, name string
	create := &cobra.Command{
		Use:   "create-key",
		Short: "Create a new installation admin API key and print it once",
		Long: `Create a new installation admin API key in the server's database and print it
once. Use it when the key printed at the first start was lost. It works on the
data directory while the server is stopped (and while it runs).`,
		Example: `  paddock admin create-key --data-dir ./data`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return server.CreateAdminKey(cmd.Context(), adminDataDir(cmd, dataDir), adminDatabase(cmd, database), name, cmd.OutOrStdout())
		},
	}
	create.SetUsageTemplate(serverUsage)
	create.Flags().StringVar(&dataDir, "data-dir", config.Default().DataDir, "the server's data directory (env PADDOCK_DATA_DIR)")
	create.Flags().StringVar(&database, "database", "", "the store, when not <data-dir>/paddock.db: sqlite:<path> or postgres://… (env PADDOCK_STORE)")
	create.Flags().StringVar(&name, "name", "admin (created offline)", "a name for the key")
	cmd.AddCommand(create, newRotateSecretsKeyCmd(), newMigrateStoreCmd(), newBackupCmd(), newRestoreCmd())
	return cmd
}

// adminDatabase is the store an admin command works on: --database, else
// PADDOCK_STORE, else "" (the data directory's SQLite database).
func adminDatabase(cmd *cobra.Command, flag string) string {
	if cmd.Flags().Changed("database") {
		return flag
	}
	return os.Getenv("PADDOCK_STORE")
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
	var dataDir, database string
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
			return server.RotateSecretsKey(cmd.Context(), adminDataDir(cmd, dataDir), adminDatabase(cmd, database), os.Getenv("PADDOCK_SECRETS_KEY"), os.Getenv("PADDOCK_SECRETS_NEW_KEY"), cmd.OutOrStdout())
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	cmd.Flags().StringVar(&database, "database", "", "the store, when not <data-dir>/paddock.db: sqlite:<path> or postgres://… (env PADDOCK_STORE)")
	cmd.Flags().StringVar(&dataDir, "data-dir", config.Default().DataDir, "the server's data directory (env PADDOCK_DATA_DIR)")
	return cmd
}

// newMigrateStoreCmd is `paddock admin migrate-store`.
func newMigrateStoreCmd() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "migrate-store",
		Short: "Copy an installation from its SQLite store into PostgreSQL",
		Long: `Copy every record of an installation from its SQLite store into an empty
PostgreSQL database: orgs, runtimes and the sandbox ledger, credit accounts and
the journal, users, keys and secrets (still sealed). Each table's row count and
the ledger's sums are checked on both sides before the copy commits; a copy
that fails leaves the target as it was.

Stop the server first, or it keeps writing to the SQLite store after the copy.
Keep the data directory's secrets.key (or PADDOCK_SECRETS_KEY) for the new
servers: the secrets stay sealed under it. Then start every replica with
--database <the postgres DSN>.`,
		Example: `  paddock admin migrate-store --from ./data/paddock.db --to postgres://paddock@db:5432/paddock`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, ok := strings.CutPrefix(from, "sqlite:")
			if !ok && strings.Contains(from, "://") {
				return usagef("--from must be a SQLite store (sqlite:<path> or a path)")
			}
			if !strings.HasPrefix(to, "postgres://") && !strings.HasPrefix(to, "postgresql://") {
				return usagef("--to must be a postgres:// DSN")
			}
			rep, err := storecopy.Copy(cmd.Context(), strings.TrimPrefix(path, "//"), to, nil)
			if err != nil {
				return err
			}
			rep.Print(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	cmd.Flags().StringVar(&from, "from", "", "the SQLite store to copy (sqlite:<path> or a path)")
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to copy into (postgres://…)")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
