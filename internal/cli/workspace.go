package cli

import (
	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var workspaceColumns = []column[client.Workspace]{
	{"ID", func(w client.Workspace) string { return w.ID }},
	{"NAME", func(w client.Workspace) string { return w.Name }},
	{"CREATED", func(w client.Workspace) string { return ts(w.CreatedAt) }},
}

func (a *app) printWorkspace(w client.Workspace) error {
	return a.printObject(w, []field{
		{"ID", w.ID},
		{"NAME", w.Name},
		{"ORG_ID", w.OrgID},
		{"CREATED", ts(w.CreatedAt)},
	})
}

func (a *app) workspaceCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("workspace", "Create and inspect workspaces of an org", "ws")
	scopeFlags(cmd, &sc, false)
	cmd.AddCommand(a.workspaceCreateCmd(&sc), a.workspaceListCmd(&sc), a.workspaceGetCmd(&sc), a.workspaceMembersCmd(&sc))
	cmd.AddCommand(a.workspaceLimitCmds(&sc)...)
	return cmd
}

func (a *app) workspaceCreateCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "create NAME",
		Short: "Create a workspace",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			org, err := a.orgName(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			w, err := c.CreateWorkspace(cmd.Context(), org, client.CreateWorkspaceRequest{Name: args[0]})
			if err != nil {
				return err
			}
			return a.printWorkspace(w)
		},
	}
}

func (a *app) workspaceListCmd(sc *scope) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the workspaces of an org",
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
			l, err := c.ListWorkspaces(cmd.Context(), org, page)
			if err != nil {
				return err
			}
			return printList(a, l, workspaceColumns)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

func (a *app) workspaceGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get [NAME]",
		Short: "Show a workspace (by default the default workspace)",
		Args:  rangeArgs(0, 1, "at most one workspace NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				sc.ws = args[0]
			}
			org, ws, err := a.orgAndWorkspace(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			w, err := c.GetWorkspace(cmd.Context(), org, ws)
			if err != nil {
				return err
			}
			return a.printWorkspace(w)
		},
	}
}
