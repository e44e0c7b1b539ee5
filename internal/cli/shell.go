package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/pkg/client"
)

// eot is Ctrl-D: sent when a non-terminal standard input ends, so that a
// shell reading it sees end of file.
const eot = "\x04"

func (a *app) shellCmd() *cobra.Command {
	var (
		sc        scope
		cwd, user string
	)
	cmd := &cobra.Command{
		Use:   "shell [flags] RUNTIME [flags] [-- COMMAND [ARG...]]",
		Short: "Open an interactive terminal in a runtime's sandbox",
		Long: `Open an interactive terminal in a running runtime's sandbox, like ssh: the
sandbox's shell (or COMMAND) on a pseudo-terminal, this terminal in raw mode,
window size changes followed, and Ctrl-C sent to the sandbox. paddock exits
with the shell's exit code. Standard input need not be a terminal: piped
input is typed into the session, then Ctrl-D. ` + runtimeArg,
		Example: `  paddock shell agent
  paddock shell -w /workspace/src agent -- python3`,
		DisableFlagParsing: true, // see commandLine
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, argv, help, err := a.commandLine(cmd, args)
			if err != nil {
				return err
			}
			if help {
				return cmd.Help()
			}
			ctx := cmd.Context()
			t, err := a.target(ctx, &sc, rt)
			if err != nil {
				return err
			}
			return a.shell(ctx, t, client.TerminalOptions{Argv: argv, Cwd: cwd, User: user, Term: a.getenv("TERM")})
		},
	}
	scopeFlags(cmd, &sc, true)
	cmd.Flags().StringVarP(&cwd, "workdir", "w", "", "working directory in the sandbox (absolute)")
	cmd.Flags().StringVarP(&user, "user", "u", "", "run as this account: user (uid 1000) or root (default: the runtime's)")
	return cmd
}

// ttyOf returns the file behind r when it is a terminal.
func ttyOf(r any) (*os.File, bool) {
	f, ok := r.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// shell runs a terminal session joined to the CLI's standard streams.
func (a *app) shell(ctx context.Context, t target, opts client.TerminalOptions) error {
	in, interactive := ttyOf(a.env.Stdin)
	if interactive {
		if cols, rows, err := term.GetSize(int(in.Fd())); err == nil {
			opts.Rows, opts.Cols = rows, cols
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tm, err := t.c.Terminal(ctx, t.org, t.ws, t.rid, opts)
	if err != nil {
		return err
	}
	defer tm.Close()

	if interactive {
		old, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return err
		}
		defer func() { _ = term.Restore(int(in.Fd()), old) }()
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go followSize(ctx, in, tm, winch)
	}

	// Keystrokes go to the sandbox as they come; Ctrl-C among them (raw
	// mode turns it into a byte, not a signal here). The reader of a
	// terminal cannot be interrupted, so it ends with the process.
	go func() {
		_, err := io.Copy(tm, a.env.Stdin)
		if err == nil && !interactive {
			_, _ = io.WriteString(tm, eot)
		}
	}()

	_, err = io.Copy(a.env.Stdout, tm)
	if err != nil {
		return err
	}
	if interactive {
		// Leave the local terminal on a fresh line, as ssh does.
		_, _ = io.WriteString(a.env.Stdout, "\r")
	}
	st, ok := tm.Exit()
	if !ok {
		return errors.New("the terminal ended without its process exiting")
	}
	if code := statusCode(st); code != 0 {
		return exitCode(code)
	}
	return nil
}

// followSize resizes the sandbox's terminal whenever the local one
// changes size, until ctx ends.
func followSize(ctx context.Context, in *os.File, tm *client.Terminal, winch <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-winch:
			if cols, rows, err := term.GetSize(int(in.Fd())); err == nil {
				_ = tm.Resize(rows, cols)
			}
		}
	}
}
