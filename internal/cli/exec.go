package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// exitCode carries the exit status of a command run in a sandbox out of
// the CLI: report prints nothing for it and exits with it.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// signalNumbers are the Linux numbers of the signals a sandbox reports, for
// the shell convention that a command killed by signal N exits 128+N.
var signalNumbers = map[string]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6,
	"SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12,
	"SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15, "SIGXCPU": 24, "SIGXFSZ": 25,
}

// statusCode is the exit code a shell would give a process that ended so.
func statusCode(st client.ExitStatus) int {
	if st.Signal != "" {
		if n, ok := signalNumbers[st.Signal]; ok {
			return 128 + n
		}
		return 128
	}
	if st.Code < 0 || st.Code > 255 {
		return ExitError
	}
	return st.Code
}

// exitWith turns an exit status into the CLI's result.
func (a *app) exitWith(st client.ExitStatus) error {
	if st.TimedOut {
		fmt.Fprintln(a.env.Stderr, "paddock: the command timed out and was killed")
	}
	if st.OOMKilled {
		fmt.Fprintln(a.env.Stderr, "paddock: the sandbox ran out of memory and the command was killed")
	}
	if code := statusCode(st); code != 0 {
		return exitCode(code)
	}
	return nil
}

func (a *app) execCmd() *cobra.Command {
	var (
		sc scope
		fl execFlags
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] RUNTIME [flags] -- COMMAND [ARG...]",
		Short: "Run a command in a runtime's sandbox",
		Long: `Run a command in a running runtime's sandbox. Its output streams as it is
produced and paddock exits with the command's exit code (128+N when signal N
killed it). paddock's flags may stand anywhere before "--"; without "--"
they go before RUNTIME and everything after it is the command.
Interrupting paddock kills the command; with --detach it runs in the
background and paddock prints its process id. With -o json the output is
collected and printed as one JSON result. Standard input goes to the command
when it is piped or redirected (as with ssh; -n turns that off), and from a
terminal with -i. A command that is not found exits 127, one that cannot be
run 126, and an interrupted paddock 130, as in a shell. ` + runtimeArg,
		Example: `  paddock exec agent -- ls -la /workspace
  paddock exec agent --org acme -w /workspace -- make test
  echo hello | paddock exec agent -- tr a-z A-Z`,
		DisableFlagParsing: true, // see commandLine
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.exec(cmd, args, &sc, &fl)
		},
	}
	scopeFlags(cmd, &sc, true)
	f := cmd.Flags()
	f.BoolVarP(&fl.stdin, "stdin", "i", false, "send standard input to the command (piped input is sent without it)")
	f.BoolVarP(&fl.noStdin, "no-stdin", "n", false, "do not send piped standard input to the command")
	f.BoolVarP(&fl.detach, "detach", "d", false, "run the command in the background and print its process id")
	f.StringArrayVarP(&fl.env, "env", "e", nil, "set an environment variable, NAME=VALUE (repeatable)")
	f.StringVarP(&fl.cwd, "workdir", "w", "", "working directory in the sandbox (absolute)")
	f.StringVarP(&fl.user, "user", "u", "", "run as this account: user (uid 1000) or root (default: the runtime's)")
	f.DurationVar(&fl.timeout, "timeout", 0, "kill the command after this long, e.g. 30s (default: never)")
	return cmd
}

// execFlags are exec's flags, beside its scope.
type execFlags struct {
	stdin, noStdin, detach bool
	env                    []string
	cwd, user              string
	timeout                time.Duration
}

// exec runs the command of args (RUNTIME and COMMAND, with flags, which
// it parses into fl) in the runtime's sandbox: streamed, or collected
// with --detach or -o json.
func (a *app) exec(cmd *cobra.Command, args []string, sc *scope, fl *execFlags) error {
	rt, argv, help, err := a.commandLine(cmd, args)
	if err != nil {
		return err
	}
	if help {
		return cmd.Help()
	}
	if len(argv) == 0 {
		return usagef("expected a COMMAND after RUNTIME")
	}
	req, err := a.execRequest(argv, *fl)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	t, err := a.target(ctx, sc, rt)
	if err != nil {
		return err
	}
	if fl.detach || a.output == outputJSON {
		return a.execCollected(ctx, t, req)
	}
	return a.execStreamed(ctx, t, req)
}

// execRequest is the request to run argv as fl asks, refusing flags that
// contradict each other.
func (a *app) execRequest(argv []string, fl execFlags) (client.ExecRequest, error) {
	stdin, noStdin, detach := fl.stdin, fl.noStdin, fl.detach
	if stdin && noStdin {
		return client.ExecRequest{}, usagef("--stdin and --no-stdin contradict each other")
	}
	// As ssh does: standard input that is not a terminal (a pipe,
	// a file) goes to the command unless -n; a terminal only with -i.
	forward := stdin
	if _, tty := ttyOf(a.env.Stdin); !tty && !noStdin && !detach && a.output != outputJSON {
		forward = true
	}
	req := client.ExecRequest{Argv: argv, Cwd: fl.cwd, User: fl.user, Background: detach, OpenStdin: forward && !detach}
	if len(fl.env) > 0 {
		req.Env = map[string]string{}
		for _, kv := range fl.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return client.ExecRequest{}, usagef("--env %q: want NAME=VALUE", kv)
			}
			req.Env[k] = v
		}
	}
	if fl.timeout < 0 {
		return client.ExecRequest{}, usagef("--timeout must not be negative")
	}
	req.TimeoutMS = fl.timeout.Milliseconds()
	if stdin && (detach || a.output == outputJSON) {
		return client.ExecRequest{}, usagef("--stdin streams to a foreground command; it cannot be combined with --detach or -o json")
	}
	return req, nil
}

// execCollected runs the command to its end (or starts it, detached) and
// prints the result.
func (a *app) execCollected(ctx context.Context, t target, req client.ExecRequest) error {
	res, err := t.c.Exec(ctx, t.org, t.ws, t.rid, req)
	if err != nil {
		return err
	}
	if a.output == outputJSON {
		if err := a.printJSON(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.env.Stdout, res.ID)
	}
	if res.Exit == nil {
		return nil
	}
	return a.exitWith(*res.Exit)
}

// execStreamed streams the command's output to stdout and stderr, feeding
// it standard input when asked.
func (a *app) execStreamed(ctx context.Context, t target, req client.ExecRequest) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := t.c.ExecStream(ctx, t.org, t.ws, t.rid, req)
	if err != nil {
		return err
	}
	defer st.Close()
	if req.OpenStdin {
		// The copy ends at the end of standard input; a process that
		// exits first ends the request, and a terminal that is still
		// being read from is left to the process's exit.
		go func() {
			_, _ = t.c.WriteStdin(ctx, t.org, t.ws, t.rid, st.ID, a.env.Stdin, true)
		}()
	}
	exit, err := st.Wait(a.env.Stdout, a.env.Stderr)
	if err != nil {
		return err
	}
	return a.exitWith(exit)
}
