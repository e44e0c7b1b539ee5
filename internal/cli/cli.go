// Package cli is the paddock command: one cobra command per noun, each in
// its own file, talking to the server only through pkg/client.
//
// The entry point, Run, takes its arguments, standard streams and
// environment as values rather than reading the process's globals, so tests
// run commands in-process (see the clitest package).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/version"
	"github.com/paddockhq/paddock/pkg/client"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // the command ran and failed
	ExitUsage = 2 // the command was called wrongly

	// As a shell exits: a command that cannot be run, one that is not
	// found, and an interrupt (Ctrl-C, 128+SIGINT).
	ExitNotExecutable = 126
	ExitNotFound      = 127
	ExitInterrupted   = 130
)

// shellCodes gives the API's codes for a command that could not start the
// exit code a shell gives it.
var shellCodes = map[string]int{
	"command_not_found":      ExitNotFound,
	"command_not_executable": ExitNotExecutable,
	"exec_format_error":      ExitNotExecutable,
	"too_many_symlinks":      ExitNotExecutable,
	"argument_list_too_long": ExitNotExecutable,
	"text_file_busy":         ExitNotExecutable,
}

// Env is everything a run of the CLI reads from its process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads an environment variable; nil means none is set.
	LookupEnv func(key string) (string, bool)
}

// Main runs the CLI with the process's environment and returns the exit
// code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(ctx, Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, LookupEnv: os.LookupEnv}, args)
}

// Run runs the CLI with args (without the program name) and returns the
// exit code: ExitOK, ExitError or ExitUsage. Errors are printed to
// env.Stderr as "error: <message> (<code>)".
func Run(ctx context.Context, env Env, args []string) int {
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	a := &app{env: env}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	return a.report(cmd, err)
}

// app is the state one run of the CLI shares between its commands.
type app struct {
	env Env

	// Persistent flags of the root command.
	url, apiKey, output, configPath string

	// ran is set once a command's own RunE starts: an error before that
	// came from parsing the command line.
	ran bool

	cfg *fileConfig // loaded on first use
}

// usageError is an error in how the command was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// report prints err and returns its exit code.
func (a *app) report(cmd *cobra.Command, err error) int {
	w := a.env.Stderr
	var code exitCode
	if errors.As(err, &code) {
		return int(code) // the sandbox command's own status; it said why
	}
	var ue *usageError
	if errors.As(err, &ue) || !a.ran {
		fmt.Fprintf(w, "error: %v\n", err)
		if cmd != nil {
			fmt.Fprintf(w, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return ExitUsage
	}
	var apiErr *client.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		fmt.Fprintf(w, "error: %s (%s)\n", apiErr.Message, apiErr.Code)
		if errors.Is(apiErr, client.ErrInternal) && apiErr.RequestID != "" {
			fmt.Fprintf(w, "request id: %s\n", apiErr.RequestID)
		}
		if code, ok := shellCodes[apiErr.Code]; ok {
			return code
		}
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "error: interrupted")
		return ExitInterrupted
	case errors.As(err, &urlErr):
		fmt.Fprintf(w, "error: cannot reach the paddock server at %s: %v\n", a.serverURL(), urlErr.Err)
	default:
		fmt.Fprintf(w, "error: %v\n", err)
	}
	return ExitError
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "paddock",
		Short: "paddock runs durable runtimes for AI agents on ephemeral sandboxes",
		Long: `paddock is a control plane for AI-agent runtimes and sandboxes.

Commands other than serve talk to a paddock server. Its URL and credential
come from --url and --api-key, else PADDOCK_URL and PADDOCK_API_KEY, else the
config file written by 'paddock login'. The credential is an API key
(pdk_...) or the session token of a wallet sign-in ('paddock login
--wallet-key-file'). Default org and workspace come from --org and --ws,
else PADDOCK_ORG and PADDOCK_WS, else the config file.`,
		Version:           version.Version,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.checkOutput() },
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetVersionTemplate("paddock {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", "", "paddock server URL (env PADDOCK_URL; default "+defaultURL+")")
	pf.StringVar(&a.apiKey, "api-key", "", "API key or session token (env PADDOCK_API_KEY)")
	pf.StringVarP(&a.output, "output", "o", outputTable, "output format: table or json")
	pf.StringVar(&a.configPath, "config", "", "config file (env PADDOCK_CONFIG; default $XDG_CONFIG_HOME/paddock/config.json)")

	root.AddCommand(
		newServeCmd(),
		newAdminCmd(),
		a.loginCmd(), a.logoutCmd(), a.whoamiCmd(),
		a.userCmd(),
		a.orgCmd(),
		a.memberCmd(),
		a.keyCmd(),
		a.workspaceCmd(),
		a.projectCmd(),
		a.templateCmd(),
		a.runtimeCmd(),
		a.egressCmd(),
		a.portCmd(),
		a.secretCmd(),
		a.sandboxCmd(),
		a.creditsCmd(), a.usageCmd(),
		a.execCmd(),
		a.psCmd(), a.attachCmd(), a.killCmd(),
		a.cpCmd(),
		a.shellCmd(),
		a.sshCmd(), a.sshConfigCmd(), a.sshKeyCmd(), a.invitationCmd(),
		a.capabilitiesCmd(), a.imageCmd(),
		a.capabilityCmd(), a.catalogCmd(), a.inventoryCmd(),
		a.promptCmd(), a.taskCmd(), a.sessionCmd(),
		a.worldCmd(),
		a.snapshotCmd(),
		a.instanceCmd(),
		a.workflowCmd(),
		a.hostCmd(),
		a.mcpCmd(),
		a.versionCmd(),
		a.completionCmd(),
	)
	a.markRuns(root)
	a.addCompletions(root)
	return root
}

// checkOutput validates --output.
func (a *app) checkOutput() error {
	switch a.output {
	case outputTable, outputJSON:
		return nil
	}
	return usagef("--output must be %q or %q, not %q", outputTable, outputJSON, a.output)
}

// markRuns wraps every command's RunE so that report can tell a failure of
// the command from an error in its command line.
func (a *app) markRuns(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			a.ran = true
			return run(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		a.markRuns(sub)
	}
}

// groupCmd is a noun: it only holds verbs. Called alone it prints its help;
// called with an unknown verb it is a usage error.
func groupCmd(use, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:                        use,
		Short:                      short,
		Aliases:                    aliases,
		SuggestionsMinimumDistance: 2,
		Args:                       cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return usagef("%s", msg)
		},
	}
}

// listCmd is a noun's `ls` verb, with --limit and --cursor: it prints the
// page that list fetches, as a table of cols or as JSON.
func listCmd[T any](a *app, short string, cols []column[T], list func(ctx context.Context, page client.ListOptions) (client.List[T], error)) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   short,
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := list(cmd.Context(), page)
			if err != nil {
				return err
			}
			return printList(a, l, cols)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

// exactArgs is cobra.ExactArgs with a usage error naming the arguments.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != len(names) {
			if len(names) == 0 {
				return usagef("this command takes no arguments, got %q", args)
			}
			return usagef("expected %s, got %d argument(s)", strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// rangeArgs accepts from min to max arguments.
func rangeArgs(min, max int, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usagef("expected %s, got %d argument(s)", usage, len(args))
		}
		return nil
	}
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this paddock",
		Args:  exactArgs(),
		RunE: func(*cobra.Command, []string) error {
			if a.output == outputJSON {
				return a.printJSON(map[string]string{"version": version.Version})
			}
			_, err := fmt.Fprintf(a.env.Stdout, "paddock %s\n", version.Version)
			return err
		},
	}
}
