package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var memberColumns = []column[client.WorkspaceMember]{
	{"MEMBER", func(m client.WorkspaceMember) string { return m.Member }},
	{"ADDED", func(m client.WorkspaceMember) string { return ts(m.CreatedAt) }},
}

func (a *app) printMemberLimit(l client.MemberLimit) error {
	limit := "none"
	if l.MemberLimit > 0 {
		limit = strconv.Itoa(l.MemberLimit)
	}
	return a.printObject(l, []field{
		{"MEMBER_LIMIT", limit},
		{"MEMBERS", strconv.Itoa(l.Members)},
		{"OVER_LIMIT", strconv.FormatBool(l.OverLimit)},
	})
}

// workspaceMembersCmd is `paddock workspace members ls|add|rm`.
func (a *app) workspaceMembersCmd(sc *scope) *cobra.Command {
	cmd := groupCmd("members", "List, add and remove the members of a workspace", "member")
	wsFlag(cmd, sc)
	ls := listCmd(a, "List a workspace's members", memberColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.WorkspaceMember], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.WorkspaceMember]{}, err
			}
			return s.c.ListMembers(ctx, s.org, s.ws, page)
		})
	add := &cobra.Command{
		Use:   "add MEMBER",
		Short: "Add a member (an email address or a name)",
		Long: `Add a member to a workspace. Over the workspace's member limit, its running
compute is paused (pause reason member_limit_exceeded) and starts are
refused until it is back under.`,
		Args: exactArgs("MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			m, err := s.c.AddMember(cmd.Context(), s.org, s.ws, client.AddMemberRequest{Member: args[0]})
			if err != nil {
				return err
			}
			return a.printObject(m, []field{{"MEMBER", m.Member}, {"WORKSPACE_ID", m.WorkspaceID}, {"ADDED", ts(m.CreatedAt)}})
		},
	}
	rm := &cobra.Command{
		Use:     "rm MEMBER",
		Aliases: []string{"remove"},
		Short:   "Remove a member; paused compute stays paused until resumed",
		Args:    exactArgs("MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.RemoveMember(cmd.Context(), s.org, s.ws, args[0]); err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(map[string]string{"removed": args[0]})
			}
			_, err = fmt.Fprintf(a.env.Stdout, "removed member %s\n", args[0])
			return err
		},
	}
	cmd.AddCommand(ls, add, rm)
	return cmd
}

// workspaceLimitCmds are `paddock workspace limit` and `workspace
// set-limit N`.
func (a *app) workspaceLimitCmds(sc *scope) []*cobra.Command {
	get := &cobra.Command{
		Use:   "limit",
		Short: "Show a workspace's member limit and member count",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			l, err := s.c.GetMemberLimit(cmd.Context(), s.org, s.ws)
			if err != nil {
				return err
			}
			return a.printMemberLimit(l)
		},
	}
	set := &cobra.Command{
		Use:   "set-limit N",
		Short: "Set a workspace's member limit, 0 for none (needs an installation admin key)",
		Args:  exactArgs("N"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return usagef("N %q: want a number of members, 0 for no limit", args[0])
			}
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			l, err := s.c.SetMemberLimit(cmd.Context(), s.org, s.ws, client.SetMemberLimitRequest{MemberLimit: n})
			if err != nil {
				return err
			}
			return a.printMemberLimit(l)
		},
	}
	wsFlag(get, sc)
	wsFlag(set, sc)
	return []*cobra.Command{get, set}
}
