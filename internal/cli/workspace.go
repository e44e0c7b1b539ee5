package cli

import (
	"context"

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
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			w, err := s.c.CreateWorkspace(cmd.Context(), s.org, client.CreateWorkspaceRequest{Name: args[0]})
			if err != nil {
				return err
			}
			return a.printWorkspace(w)
		},
	}
}

func (a *app) workspaceListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the workspaces of an org", workspaceColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Workspace], error) {
			s, err := a.orgSession(sc)
			if err != nil {
				return client.List[client.Workspace]{}, err
			}
			return s.c.ListWorkspaces(ctx, s.org, page)
		})
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
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			w, err := s.c.GetWorkspace(cmd.Context(), s.org, s.ws)
			if err != nil {
				return err
			}
			return a.printWorkspace(w)
		},
	}
}
