package cli

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var runtimeColumns = []column[client.Runtime]{
	{"ID", func(r client.Runtime) string { return r.ID }},
	{"PROJECT", func(r client.Runtime) string { return cmp.Or(r.ProjectName, r.ProjectID) }},
	{"STATUS", func(r client.Runtime) string { return r.Status }},
	{"PAUSE", func(r client.Runtime) string { return r.PauseReason }},
	{"SANDBOX", func(r client.Runtime) string { return r.CurrentSandboxID }},
	{"IMAGE", func(r client.Runtime) string { return r.Config.Image }},
	{"EXPIRES", func(r client.Runtime) string { return tsp(r.ExpiresAt) }},
	{"UPDATED", func(r client.Runtime) string { return ts(r.UpdatedAt) }},
}

func (a *app) printRuntime(r client.Runtime) error {
	return a.printObject(r, []field{
		{"ID", r.ID},
		{"PROJECT", r.ProjectName},
		{"PROJECT_ID", r.ProjectID},
		{"STATUS", r.Status},
		{"STATUS_REASON", r.StatusReason},
		{"SANDBOX", r.CurrentSandboxID},
		{"PAUSE_REASON", r.PauseReason},
		{"EXPIRES", tsp(r.ExpiresAt)},
		{"IMAGE", r.Config.Image},
		{"PROVIDER", r.Config.Provider},
		{"CPU", cpus(r.Config.CPUMillis)},
		{"MEMORY", mem(r.Config.MemoryMB)},
		{"PIDS_LIMIT", itoa(r.Config.PidsLimit)},
		{"NETWORK", networkOf(r.Config.Network)},
		{"SECRETS", strings.Join(r.Config.Secrets, ", ")},
		{"ROOTFS", r.Config.RootFS},
		{"USER", r.Config.User},
		{"CAPABILITIES", r.Config.CapabilitiesJSON},
		{"CAPABILITY_PROBLEMS", strings.Join(r.CapabilityProblems, "; ")},
		{"IDLE_TIMEOUT", secs(r.Config.IdleTimeoutSeconds)},
		{"MAX_LIFETIME", secs(r.Config.MaxLifetimeSeconds)},
		{"ARCHIVE_AFTER", secs(r.Config.ArchiveAfterSeconds)},
		{"ORG_ID", r.OrgID},
		{"WORKSPACE_ID", r.WorkspaceID},
		{"CREATED", ts(r.CreatedAt)},
		{"UPDATED", ts(r.UpdatedAt)},
	})
}

func (a *app) runtimeCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("runtime", "Inspect runtimes and start, pause, resume, reset or keep them alive", "rt")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(
		a.runtimeListCmd(&sc),
		a.runtimeGetCmd(&sc),
		a.runtimeStartCmd(&sc),
		a.runtimeActionCmd(&sc, "pause", "Pause a runtime's sandbox, keeping its state",
			func(ctx context.Context, t target) (client.Runtime, error) {
				return t.c.PauseRuntime(ctx, t.org, t.ws, t.rid)
			}),
		a.runtimeActionCmd(&sc, "resume", "Resume a paused runtime",
			func(ctx context.Context, t target) (client.Runtime, error) {
				return t.c.ResumeRuntime(ctx, t.org, t.ws, t.rid)
			}),
		a.runtimeResetCmd(&sc),
		a.runtimeKeepaliveCmd(&sc),
		a.runtimeSetCmd(&sc),
	)
	return cmd
}

// runtimeArg is the RUNTIME argument's help.
const runtimeArg = "RUNTIME is a runtime id, or the name of the runtime's project."

// runtimeID resolves a RUNTIME argument: a runtime id as is, a project name
// to its project's runtime.
func (a *app) runtimeID(ctx context.Context, c *client.Client, org, ws, arg string) (string, error) {
	if isUUID(arg) {
		return arg, nil
	}
	p, err := c.GetProject(ctx, org, ws, arg)
	if err != nil {
		return "", err
	}
	return p.RuntimeID, nil
}

// target is a runtime resolved from a RUNTIME argument, with the client
// that reaches it.
type target struct {
	session
	rid string
}

// target resolves the scope, the client and the RUNTIME argument.
func (a *app) target(ctx context.Context, sc *scope, arg string) (target, error) {
	s, err := a.workspaceSession(sc)
	if err != nil {
		return target{}, err
	}
	id, err := a.runtimeID(ctx, s.c, s.org, s.ws, arg)
	if err != nil {
		return target{}, err
	}
	return target{session: s, rid: id}, nil
}

// runtimeCall resolves the RUNTIME argument, then runs act and prints the
// runtime it returns.
func (a *app) runtimeCall(cmd *cobra.Command, sc *scope, arg string, act func(ctx context.Context, t target) (client.Runtime, error)) error {
	ctx := cmd.Context()
	t, err := a.target(ctx, sc, arg)
	if err != nil {
		return err
	}
	rt, err := act(ctx, t)
	if err != nil {
		return err
	}
	return a.printRuntime(rt)
}

func (a *app) runtimeListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the runtimes of a workspace", runtimeColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Runtime], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.Runtime]{}, err
			}
			return s.c.ListRuntimes(ctx, s.org, s.ws, page)
		})
}

func (a *app) runtimeGetCmd(sc *scope) *cobra.Command {
	return a.runtimeActionCmd(sc, "get", "Show a runtime",
		func(ctx context.Context, t target) (client.Runtime, error) {
			return t.c.GetRuntime(ctx, t.org, t.ws, t.rid)
		})
}

// runtimeActionCmd is `runtime VERB RUNTIME`: it runs act on the runtime
// and prints the runtime act returns.
func (a *app) runtimeActionCmd(sc *scope, verb, short string, act func(ctx context.Context, t target) (client.Runtime, error)) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " RUNTIME",
		Short: short,
		Long:  short + ". " + runtimeArg,
		Args:  exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runtimeCall(cmd, sc, args[0], act)
		},
	}
}

func (a *app) runtimeStartCmd(sc *scope) *cobra.Command {
	var secrets []string
	cmd := a.runtimeActionCmd(sc, "start", "Provision a sandbox for a runtime",
		func(ctx context.Context, t target) (client.Runtime, error) {
			return t.c.StartRuntime(ctx, t.org, t.ws, t.rid, client.StartRuntimeRequest{SecretIDs: secrets})
		})
	cmd.Long = "Provision a sandbox for a runtime, injecting the given secrets. " + runtimeArg
	cmd.Flags().StringSliceVar(&secrets, "secret", nil, "secret to inject, by name or id (repeatable)")
	return cmd
}

func (a *app) runtimeResetCmd(sc *scope) *cobra.Command {
	var wipe bool
	cmd := a.runtimeActionCmd(sc, "reset", "Terminate a runtime's sandbox and return it to idle",
		func(ctx context.Context, t target) (client.Runtime, error) {
			return t.c.ResetRuntime(ctx, t.org, t.ws, t.rid, client.ResetRequest{WipeWorkspace: wipe})
		})
	cmd.Long = `Terminate a runtime's sandbox and return the runtime to idle. The runtime
keeps its identity, bindings and sessions, and its workspace volume unless
--wipe-workspace. ` + runtimeArg
	cmd.Flags().BoolVar(&wipe, "wipe-workspace", false, "delete the workspace volume too")
	return cmd
}

func (a *app) runtimeKeepaliveCmd(sc *scope) *cobra.Command {
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "keepalive RUNTIME",
		Short: "Extend the expiry window of a runtime's sandbox",
		Long:  "Extend the expiry window of a runtime's sandbox by --duration (default: the runtime's idle timeout). " + runtimeArg,
		Args:  exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := durationSeconds("duration", d, true)
			if err != nil {
				return err
			}
			return a.runtimeCall(cmd, sc, args[0], func(ctx context.Context, t target) (client.Runtime, error) {
				return t.c.KeepaliveRuntime(ctx, t.org, t.ws, t.rid, client.KeepaliveRequest{DurationSeconds: n})
			})
		},
	}
	cmd.Flags().DurationVar(&d, "duration", 0, "how long to extend by, e.g. 30m (default: the runtime's idle timeout)")
	return cmd
}

// networkOf renders an egress policy on one line: "proxy allow=a,b deny=c".
func networkOf(n *client.NetworkPolicy) string {
	if n == nil {
		return ""
	}
	out := n.Mode
	if len(n.Allow) > 0 {
		out += " allow=" + strings.Join(n.Allow, ",")
	}
	if len(n.Deny) > 0 {
		out += " deny=" + strings.Join(n.Deny, ",")
	}
	return out
}
