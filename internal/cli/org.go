package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var orgColumns = []column[client.Org]{
	{"ID", func(o client.Org) string { return o.ID }},
	{"NAME", func(o client.Org) string { return o.Name }},
	{"CREATED", func(o client.Org) string { return ts(o.CreatedAt) }},
}

func (a *app) printOrg(o client.Org) error {
	return a.printObject(o, []field{
		{"ID", o.ID},
		{"NAME", o.Name},
		{"CREATED", ts(o.CreatedAt)},
	})
}

func (a *app) orgCmd() *cobra.Command {
	cmd := groupCmd("org", "Create and inspect orgs")
	cmd.AddCommand(a.orgCreateCmd(), a.orgListCmd(), a.orgGetCmd())
	return cmd
}

func (a *app) orgCreateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "create NAME",
		Short: "Create an org (needs an installation admin key)",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			o, err := c.CreateOrg(cmd.Context(), client.CreateOrgRequest{Name: args[0]})
			if err != nil {
				return err
			}
			return a.printOrg(o)
		},
	}
}

func (a *app) orgListCmd() *cobra.Command {
	return listCmd(a, "List the orgs the caller may see", orgColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Org], error) {
			c, err := a.client()
			if err != nil {
				return client.List[client.Org]{}, err
			}
			return c.ListOrgs(ctx, page)
		})
}

func (a *app) orgGetCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "Show an org (by default the default org)",
		Args:  rangeArgs(0, 1, "at most one org NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				sc.org = args[0]
			}
			s, err := a.orgSession(&sc)
			if err != nil {
				return err
			}
			o, err := s.c.GetOrg(cmd.Context(), s.org)
			if err != nil {
				return err
			}
			return a.printOrg(o)
		},
	}
	return cmd
}

// pageFlags adds --limit and --cursor to a listing.
func pageFlags(cmd *cobra.Command, page *client.ListOptions) {
	cmd.Flags().IntVar(&page.Limit, "limit", 0, "page size (default: the server's)")
	cmd.Flags().StringVar(&page.Cursor, "cursor", "", "resume a listing where a previous page ended")
}

// scopeFlags adds --org, and --ws when withWorkspace, to a noun and its
// verbs.
func scopeFlags(cmd *cobra.Command, sc *scope, withWorkspace bool) {
	cmd.PersistentFlags().StringVar(&sc.org, "org", "", "org name (env PADDOCK_ORG)")
	if withWorkspace {
		wsFlag(cmd, sc)
	}
}

// wsFlag adds --ws to a workspace verb that acts on one workspace.
func wsFlag(cmd *cobra.Command, sc *scope) {
	cmd.PersistentFlags().StringVar(&sc.ws, "ws", "", "workspace name (env PADDOCK_WS)")
}
