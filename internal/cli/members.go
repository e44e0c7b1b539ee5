package cli

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var memberColumns = []column[client.WorkspaceMember]{
	{"MEMBER", func(m client.WorkspaceMember) string { return m.Member }},
	{"USER_ID", func(m client.WorkspaceMember) string { return m.UserID }},
	{"ADDED", func(m client.WorkspaceMember) string { return ts(m.CreatedAt) }},
}

var orgMemberColumns = []column[client.OrgMember]{
	{"MEMBER", func(m client.OrgMember) string { return m.Member }},
	{"ROLE", func(m client.OrgMember) string { return m.Role }},
	{"USER_ID", func(m client.OrgMember) string { return m.UserID }},
	{"ADDED", func(m client.OrgMember) string { return ts(m.CreatedAt) }},
}

func (a *app) printOrgMember(m client.OrgMember) error {
	return a.printObject(m, []field{
		{"MEMBER", m.Member},
		{"ROLE", m.Role},
		{"USER_ID", m.UserID},
		{"ORG_ID", m.OrgID},
		{"ADDED", ts(m.CreatedAt)},
	})
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
		Short: "Add a member (an email address, a wallet address or a user id)",
		Long: `Add a member of the org to a workspace: a user named by an email address,
a wallet address or a user id. Someone not yet in the org is invited to it
first ('paddock member add'); only where the installation allows direct
adds does an existing user join the org as a member on the way.

Over the workspace's member limit, its running compute is paused (pause
reason member_limit_exceeded) and starts are refused until it is back
under.`,
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
			return a.printObject(m, []field{{"MEMBER", m.Member}, {"USER_ID", m.UserID}, {"WORKSPACE_ID", m.WorkspaceID}, {"ADDED", ts(m.CreatedAt)}})
		},
	}
	rm := &cobra.Command{
		Use:     "rm MEMBER",
		Aliases: []string{"remove"},
		Short:   "Remove a member (an email address, a wallet address or a user id); paused compute stays paused until resumed",
		Args:    exactArgs("MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.RemoveMember(cmd.Context(), s.org, s.ws, args[0]); err != nil {
				return err
			}
			return a.done("removed", "removed member %s", args[0])
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

// memberCmd is `paddock member`: the members of an org and their roles.
func (a *app) memberCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("member", "List, invite and remove the members of an org, and set their roles", "members")
	cmd.Long = `List, invite and remove the members of an org and set their roles. A MEMBER
is a user named by an email address, a wallet address or a user id. Roles,
lowest first: a viewer reads; a member operates runtimes; an admin manages
projects, capabilities, members, keys and secrets; an owner also manages
billing settings and owners. Changing members needs an admin, and owners
are granted and taken by owners only.

Someone joins an org by accepting an invitation ('paddock member add',
then 'paddock invitation accept'). A workspace's own members are 'paddock
workspace members'.`
	scopeFlags(cmd, &sc, false)
	ls := listCmd(a, "List an org's members and their roles", orgMemberColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.OrgMember], error) {
			s, err := a.orgSession(&sc)
			if err != nil {
				return client.List[client.OrgMember]{}, err
			}
			return s.c.ListOrgMembers(ctx, s.org, page)
		})
	setRole := &cobra.Command{
		Use:   "set-role MEMBER ROLE",
		Short: "Change a member's role (viewer, member, admin or owner)",
		Long: `Change a member's role. It takes effect on the member's next request,
keys included: a key never acts above its holder's role.`,
		Args: exactArgs("MEMBER", "ROLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(&sc)
			if err != nil {
				return err
			}
			m, err := s.c.SetOrgMemberRole(cmd.Context(), s.org, args[0], client.SetRoleRequest{Role: args[1]})
			if err != nil {
				return err
			}
			return a.printOrgMember(m)
		},
	}
	rm := &cobra.Command{
		Use:     "rm MEMBER",
		Aliases: []string{"remove"},
		Short:   "Remove a member from the org; their keys stop working",
		Args:    exactArgs("MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(&sc)
			if err != nil {
				return err
			}
			if err := s.c.RemoveOrgMember(cmd.Context(), s.org, args[0]); err != nil {
				return err
			}
			return a.done("removed", "removed member %s", args[0])
		},
	}
	cmd.AddCommand(ls, a.memberAddCmd(&sc), setRole, rm, a.memberInvitationsCmd(&sc), a.memberRevokeCmd(&sc))
	return cmd
}

// memberAddCmd is 'paddock member add': invite someone to the org of sc.
func (a *app) memberAddCmd(sc *scope) *cobra.Command {
	var role string
	add := &cobra.Command{
		Use:     "add MEMBER [--role ROLE]",
		Aliases: []string{"invite"},
		Short:   "Invite someone to the org with a role (default member)",
		Long: `Invite whoever holds an email or wallet address (MEMBER) to the org with
--role (viewer, member, admin or owner; default member). They see it with
'paddock invitation ls' and accept or decline it; accepted, they get the
role, at most yours by then. An invitation expires after 7 days unless the
installation says otherwise, and no user is made for it: an address no user
has waits until the installation admin makes one. 'paddock member
invitations' lists the pending ones, 'paddock member revoke' takes one back.

Where the installation allows direct adds (members.direct_add), a user who
has the address is added at once. The installation admin always adds
directly, by user id too, and makes a user of an address no user has yet.`,
		Example: `  paddock member add ann@example.com --role admin
  paddock member invite 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf`,
		Args: exactArgs("MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			added, err := s.c.AddOrgMember(cmd.Context(), s.org, client.AddOrgMemberRequest{Member: args[0], Role: role})
			if err != nil {
				return err
			}
			if added.Invitation != nil {
				return a.printInvitation(*added.Invitation)
			}
			return a.printOrgMember(*added.Member)
		},
	}
	add.Flags().StringVar(&role, "role", client.RoleMember, "viewer, member, admin or owner")
	return add
}
