package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// instanceCmd is a server in instance mode: its one runtime's operations
// under /api/sandbox, with no runtime to name.
func (a *app) instanceCmd() *cobra.Command {
	cmd := groupCmd("instance", "Use the runtime a server in instance mode serves (/api/sandbox)")
	cmd.Long = `A server started with --instance org/workspace/project serves that
runtime's operations under /api/sandbox: these commands use them, so they
need no org, workspace or runtime. A server not in instance mode answers
404 route_not_found.`
	act := func(use, short string, do func(ctx context.Context, in client.Instance) (client.Runtime, error)) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: exactArgs(),
			RunE: func(cmd *cobra.Command, _ []string) error {
				c, err := a.client()
				if err != nil {
					return err
				}
				rt, err := do(cmd.Context(), c.Instance())
				if err != nil {
					return err
				}
				return a.printRuntime(rt)
			},
		}
	}
	cmd.AddCommand(
		act("show", "Show the instance's runtime", func(ctx context.Context, in client.Instance) (client.Runtime, error) { return in.Get(ctx) }),
		act("start", "Start the instance's runtime", func(ctx context.Context, in client.Instance) (client.Runtime, error) {
			return in.Start(ctx, client.StartRuntimeRequest{})
		}),
		act("stop", "Stop (pause) the instance's sandbox, keeping its state", func(ctx context.Context, in client.Instance) (client.Runtime, error) { return in.Stop(ctx) }),
		act("resume", "Continue the instance's stopped sandbox", func(ctx context.Context, in client.Instance) (client.Runtime, error) { return in.Resume(ctx) }),
		a.instanceExecCmd(),
	)
	return cmd
}

// instanceExecCmd runs a command in the instance's sandbox, prints its
// collected output and exits with its exit code.
func (a *app) instanceExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "exec -- COMMAND [ARG...]",
		Short: "Run a command in the instance's sandbox",
		Long: `Run a command in the instance's sandbox: its output is printed once it
exits, and paddock exits with its exit code (128+N when signal N killed it).`,
		Example: `  paddock instance exec -- uname -a`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Instance().Exec(cmd.Context(), client.ExecRequest{Argv: args})
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				if err := a.printJSON(res); err != nil {
					return err
				}
			} else {
				fmt.Fprint(a.env.Stdout, string(res.Stdout))
				fmt.Fprint(a.env.Stderr, string(res.Stderr))
			}
			if res.Exit == nil {
				return nil
			}
			return a.exitWith(*res.Exit)
		},
	}
}
