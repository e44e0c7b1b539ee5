package cli

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var sandboxColumns = []column[client.Sandbox]{
	{"ID", func(s client.Sandbox) string { return s.ID }},
	{"KIND", func(s client.Sandbox) string { return s.Kind }},
	{"STATE", func(s client.Sandbox) string { return s.State }},
	{"PAUSE", func(s client.Sandbox) string { return s.PauseReason }},
	{"PROVIDER", func(s client.Sandbox) string { return s.Provider }},
	{"PROVIDER_ID", func(s client.Sandbox) string { return short(s.ProviderSandboxID, 12) }},
	{"PROJECT", func(s client.Sandbox) string { return cmp.Or(s.ProjectName, s.RuntimeID) }},
	{"BILLED", func(s client.Sandbox) string { return credits(s.BilledCredits) }},
	{"ESTIMATED", func(s client.Sandbox) string { return credits(s.EstimatedTotalCredits) }},
	{"CREATED", func(s client.Sandbox) string { return ts(s.CreatedAt) }},
}

func (a *app) printSandbox(s client.Sandbox) error {
	secrets := ""
	if n := len(s.SecretIDs); n > 0 {
		secrets = strconv.Itoa(n)
	}
	return a.printObject(s, []field{
		{"ID", s.ID},
		{"KIND", s.Kind},
		{"STATE", s.State},
		{"PAUSE_REASON", s.PauseReason},
		{"KILL_REASON", s.KillReason},
		{"ERROR", s.Error},
		{"PROVIDER", s.Provider},
		{"PROVIDER_ID", s.ProviderSandboxID},
		{"IMAGE", s.Image},
		{"CPU", cpus(s.Resources.CPUMillis)},
		{"MEMORY", mem(s.Resources.MemoryMB)},
		{"SECRETS", secrets},
		{"PROJECT", s.ProjectName},
		{"RUNTIME", s.RuntimeID},
		{"PROJECT_ID", s.ProjectID},
		{"WORKSPACE_ID", s.WorkspaceID},
		{"ORG_ID", s.OrgID},
		{"BILLED", credits(s.BilledCredits)},
		{"RUNNING", credits(s.RunningCredits)},
		{"ESTIMATED", credits(s.EstimatedTotalCredits)},
		{"CREATED", ts(s.CreatedAt)},
		{"STARTED", tsp(s.StartedAt)},
		{"PAUSED", tsp(s.PausedAt)},
		{"KILLED", tsp(s.KilledAt)},
		{"EXPIRES", tsp(s.ExpiresAt)},
		{"UPDATED", ts(s.UpdatedAt)},
	})
}

func (a *app) sandboxCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("sandbox", "Inspect an org's sandbox ledger and kill sandboxes", "sb")
	scopeFlags(cmd, &sc, false)
	cmd.AddCommand(a.sandboxListCmd(&sc), a.sandboxGetCmd(&sc), a.sandboxKillCmd(&sc), a.sandboxLogsCmd(&sc))
	return cmd
}

func (a *app) sandboxListCmd(sc *scope) *cobra.Command {
	var f client.SandboxFilter
	cmd := listCmd(a, "List an org's sandboxes, newest first", sandboxColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Sandbox], error) {
			s, err := a.orgSession(sc)
			if err != nil {
				return client.List[client.Sandbox]{}, err
			}
			f.Cursor, f.Limit = page.Cursor, page.Limit
			return s.c.ListSandboxes(ctx, s.org, f)
		})
	fl := cmd.Flags()
	fl.StringVar(&f.Kind, "kind", "", "only this kind: runtime, task or world")
	fl.StringVar(&f.State, "state", "", "only this state: starting, running, paused or killed")
	fl.StringVar(&f.Provider, "provider", "", "only this provider")
	fl.StringVar(&f.RuntimeID, "runtime", "", "only the sandboxes of this runtime id")
	return cmd
}

func (a *app) sandboxGetCmd(sc *scope) *cobra.Command {
	return a.sandboxActionCmd(sc, "get", "Show a sandbox, by id or provider sandbox id",
		func(ctx context.Context, s session, id string) (client.Sandbox, error) {
			return s.c.GetSandbox(ctx, s.org, id)
		})
}

func (a *app) sandboxKillCmd(sc *scope) *cobra.Command {
	return a.sandboxActionCmd(sc, "kill", "Kill a sandbox, by id or provider sandbox id; its ledger row stays",
		func(ctx context.Context, s session, id string) (client.Sandbox, error) {
			return s.c.KillSandbox(ctx, s.org, id)
		})
}

// sandboxActionCmd is `sandbox VERB SANDBOX`: it runs act on the sandbox
// and prints the sandbox act returns.
func (a *app) sandboxActionCmd(sc *scope, verb, short string, act func(ctx context.Context, s session, id string) (client.Sandbox, error)) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " SANDBOX",
		Short: short,
		Args:  exactArgs("SANDBOX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			sb, err := act(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			return a.printSandbox(sb)
		},
	}
}

// sandboxLogsCmd is `sandbox logs SANDBOX`: the sandbox's lifecycle, one
// line per step, then what its agent wrote.
func (a *app) sandboxLogsCmd(sc *scope) *cobra.Command {
	var tail int
	cmd := &cobra.Command{
		Use:   "logs SANDBOX",
		Short: "Show a sandbox's lifecycle and its agent's log, by id or provider sandbox id",
		Args:  exactArgs("SANDBOX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			l, err := s.c.SandboxLogs(cmd.Context(), s.org, args[0], tail)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(l)
			}
			w := a.env.Stdout
			fmt.Fprintf(w, "# lifecycle of sandbox %s\n", l.SandboxID)
			for _, e := range l.Lifecycle {
				fmt.Fprintf(w, "%s %-5s %s", e.Time.Format(time.RFC3339Nano), e.Level, e.Message)
				for _, k := range slices.Sorted(maps.Keys(e.Attrs)) {
					fmt.Fprintf(w, " %s=%s", k, e.Attrs[k])
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, "# agent")
			if l.AgentError != "" {
				fmt.Fprintf(w, "(no agent log: %s)\n", l.AgentError)
			}
			fmt.Fprint(w, l.Agent)
			return nil
		},
	}
	cmd.Flags().IntVar(&tail, "tail", 0, "the agent log's last lines (default 200)")
	return cmd
}
