package cli

import (
	"strconv"

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
	{"RUNTIME", func(s client.Sandbox) string { return s.RuntimeID }},
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
	cmd.AddCommand(a.sandboxListCmd(&sc), a.sandboxGetCmd(&sc), a.sandboxKillCmd(&sc))
	return cmd
}

func (a *app) sandboxListCmd(sc *scope) *cobra.Command {
	var f client.SandboxFilter
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List an org's sandboxes, newest first",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			org, err := a.orgName(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			l, err := c.ListSandboxes(cmd.Context(), org, f)
			if err != nil {
				return err
			}
			return printList(a, l, sandboxColumns)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Kind, "kind", "", "only this kind: runtime, task or world")
	fl.StringVar(&f.State, "state", "", "only this state: starting, running, paused or killed")
	fl.StringVar(&f.Provider, "provider", "", "only this provider")
	fl.StringVar(&f.RuntimeID, "runtime", "", "only the sandboxes of this runtime id")
	fl.IntVar(&f.Limit, "limit", 0, "page size (default: the server's)")
	fl.StringVar(&f.Cursor, "cursor", "", "resume a listing where a previous page ended")
	return cmd
}

func (a *app) sandboxGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get SANDBOX",
		Short: "Show a sandbox, by id or provider sandbox id",
		Args:  exactArgs("SANDBOX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			org, err := a.orgName(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := c.GetSandbox(cmd.Context(), org, args[0])
			if err != nil {
				return err
			}
			return a.printSandbox(s)
		},
	}
}

func (a *app) sandboxKillCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "kill SANDBOX",
		Short: "Kill a sandbox, by id or provider sandbox id; its ledger row stays",
		Args:  exactArgs("SANDBOX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			org, err := a.orgName(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := c.KillSandbox(cmd.Context(), org, args[0])
			if err != nil {
				return err
			}
			return a.printSandbox(s)
		},
	}
}
