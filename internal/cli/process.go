package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var processColumns = []column[client.Process]{
	{"ID", func(p client.Process) string { return p.ID }},
	{"PID", func(p client.Process) string { return strconv.Itoa(p.PID) }},
	{"STATE", processState},
	{"MODE", func(p client.Process) string {
		switch {
		case p.PTY:
			return "terminal"
		case p.Background:
			return "background"
		}
		return "foreground"
	}},
	{"STARTED", func(p client.Process) string { return ts(p.StartedAt) }},
	{"COMMAND", func(p client.Process) string { return strings.Join(p.Argv, " ") }},
}

// processState is "running", or how the process ended.
func processState(p client.Process) string {
	if p.Running || p.Exit == nil {
		return "running"
	}
	if p.Exit.Signal != "" {
		return "killed (" + p.Exit.Signal + ")"
	}
	return "exited (" + strconv.Itoa(p.Exit.Code) + ")"
}

// psCmd is `paddock ps RUNTIME`.
func (a *app) psCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "ps RUNTIME",
		Short: "List the processes paddock started in a runtime's sandbox",
		Long: `List the processes paddock started in a runtime's sandbox: running ones, and
the most recent background ones that exited. ` + runtimeArg,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.target(cmd.Context(), &sc, args[0])
			if err != nil {
				return err
			}
			ps, err := t.c.ListProcesses(cmd.Context(), t.org, t.ws, t.rid)
			if err != nil {
				return err
			}
			return printList(a, client.List[client.Process]{Items: ps}, processColumns)
		},
	}
	scopeFlags(cmd, &sc, true)
	return cmd
}

// attachCmd is `paddock attach RUNTIME PROCESS`.
func (a *app) attachCmd() *cobra.Command {
	var (
		sc    scope
		stdin bool
		now   bool
	)
	cmd := &cobra.Command{
		Use:   "attach RUNTIME PROCESS",
		Short: "Follow a process's output again (background processes outlive their exec)",
		Long: `Follow a process's output until it exits, replaying what the agent still holds
first (or, with --now, only what comes next), and exit with its exit code.
With -i standard input goes to the process (one started with open stdin).
Leaving (Ctrl-C) does not stop the process. ` + runtimeArg,
		Example: `  id=$(paddock exec -d agent -- ./long-job)
  paddock attach agent "$id"`,
		Args: exactArgs("RUNTIME", "PROCESS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, &sc, args[0])
			if err != nil {
				return err
			}
			var opts client.AttachOptions
			if now {
				p, err := t.c.GetProcess(ctx, t.org, t.ws, t.rid, args[1])
				if err != nil {
					return err
				}
				opts.StdoutOffset, opts.StderrOffset = p.StdoutBytes, p.StderrBytes
			}
			st, err := t.c.Attach(ctx, t.org, t.ws, t.rid, args[1], opts)
			if err != nil {
				return err
			}
			defer st.Close()
			if stdin {
				go func() { _, _ = t.c.WriteStdin(ctx, t.org, t.ws, t.rid, args[1], a.env.Stdin, true) }()
			}
			exit, err := st.Wait(a.env.Stdout, a.env.Stderr)
			if err != nil {
				return err
			}
			return a.exitWith(exit)
		},
	}
	scopeFlags(cmd, &sc, true)
	cmd.Flags().BoolVarP(&stdin, "stdin", "i", false, "send standard input to the process")
	cmd.Flags().BoolVar(&now, "now", false, "skip the output produced so far")
	return cmd
}

// killCmd is `paddock kill RUNTIME PROCESS` and `paddock kill --all
// RUNTIME`.
func (a *app) killCmd() *cobra.Command {
	var (
		sc          scope
		signal      string
		all         bool
		processOnly bool
	)
	cmd := &cobra.Command{
		Use:   "kill RUNTIME PROCESS | kill --all RUNTIME",
		Short: "Signal a process in a runtime's sandbox, or kill every process there",
		Long: `Send a signal (TERM by default) to a process and its group, or with --all kill
every process in the sandbox except its agent — foreground and background
processes, terminals and whatever they left running. --all is the way out
when the sandbox has reached its process limit. ` + runtimeArg,
		Example: `  paddock kill agent p-3
  paddock kill -s INT agent p-3
  paddock kill --all agent`,
		Args: func(_ *cobra.Command, args []string) error {
			if all && len(args) != 1 {
				return usagef("--all takes RUNTIME alone, got %d argument(s)", len(args))
			}
			if !all && len(args) != 2 {
				return usagef("expected RUNTIME and PROCESS (or --all RUNTIME), got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if all && (cmd.Flags().Changed("signal") || processOnly) {
				return usagef("--all kills everything; it takes neither --signal nor --process-only")
			}
			t, err := a.target(ctx, &sc, args[0])
			if err != nil {
				return err
			}
			if all {
				res, err := t.c.KillAllProcesses(ctx, t.org, t.ws, t.rid)
				if err != nil {
					return err
				}
				if a.output == outputJSON {
					return a.printJSON(res)
				}
				fmt.Fprintf(a.env.Stdout, "killed %d process(es)\n", res.Killed)
				return nil
			}
			return t.c.SignalProcess(ctx, t.org, t.ws, t.rid, args[1], client.SignalRequest{Signal: signal, ProcessOnly: processOnly})
		},
	}
	scopeFlags(cmd, &sc, true)
	f := cmd.Flags()
	f.StringVarP(&signal, "signal", "s", "TERM", "signal to send: HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT, STOP, TSTP or WINCH")
	f.BoolVar(&processOnly, "process-only", false, "signal the process alone, not its group")
	f.BoolVar(&all, "all", false, "kill every process in the sandbox except its agent")
	return cmd
}

// bashWithoutPackage goes before cobra's bash script, which calls three
// functions of the bash-completion package: where that package is not
// loaded, it defines them, minimally.
const bashWithoutPackage = `# Without the bash-completion package: the functions of it this script uses.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    # As the package's with -n =: does: the words bash split at = or :
    # with no space between are one again (--network=<Tab>), read from
    # COMP_LINE up to the cursor.
    local line=${COMP_LINE:0:COMP_POINT} rest i w
    words=()
    for ((i = 0; i <= COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        rest=${line#"${line%%[![:space:]]*}"}
        if ((i == 0)) || [[ ${#rest} -ne ${#line} ]]; then words+=("$w"); else words[-1]+=$w; fi
        line=${rest#"$w"}
    done
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=${words[cword-1]}
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir() {
    local IFS=$'\n'
    if [[ ${1-} == -d ]]; then COMPREPLY+=($(compgen -d -- "$cur")); else COMPREPLY+=($(compgen -f -- "$cur")); fi
}
fi

`

// completionCmd is `paddock completion bash|zsh|fish`.
func (a *app) completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print a completion script for bash, zsh or fish. Load it in the running shell
or install it where the shell looks for completions:

  source <(paddock completion bash)                                  # bash, now
  echo 'source <(paddock completion bash)' >> ~/.bashrc                # bash, always

Runtime and project names, --org and --ws, and the values of flags such as
--network complete from the server. The bash script needs no
bash-completion package.
  paddock completion zsh > "${fpath[1]}/_paddock"                     # zsh
  paddock completion fish > ~/.config/fish/completions/paddock.fish  # fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args:      exactArgs("SHELL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), a.env.Stdout
			switch args[0] {
			case "bash":
				if _, err := io.WriteString(w, bashWithoutPackage); err != nil {
					return err
				}
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			}
			return usagef("no completion for %q: want bash, zsh or fish", args[0])
		},
	}
}
