package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// Invitations: an org's pending ones, for its admins (paddock member
// invitations|revoke), and the caller's own (paddock invitation).

var invitationColumns = []column[client.Invitation]{
	{"ID", func(i client.Invitation) string { return i.ID }},
	{"ORG", func(i client.Invitation) string { return i.Org }},
	{"INVITEE", client.Invitation.Invitee},
	{"ROLE", func(i client.Invitation) string { return i.Role }},
	{"INVITER", func(i client.Invitation) string { return i.Inviter }},
	{"STATE", func(i client.Invitation) string { return i.State }},
	{"EXPIRES", func(i client.Invitation) string { return ts(i.ExpiresAt) }},
}

func (a *app) printInvitation(i client.Invitation) error {
	return a.printObject(i, []field{
		{"INVITATION", i.ID},
		{"ORG", i.Org},
		{"INVITEE", i.Invitee()},
		{"ROLE", i.Role},
		{"INVITER", i.Inviter},
		{"STATE", i.State},
		{"EXPIRES", ts(i.ExpiresAt)},
	})
}

// memberInvitationsCmd is `paddock member invitations`.
func (a *app) memberInvitationsCmd(sc *scope) *cobra.Command {
	cmd := listCmd(a, "List the org's pending invitations (needs an admin)", invitationColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Invitation], error) {
			s, err := a.orgSession(sc)
			if err != nil {
				return client.List[client.Invitation]{}, err
			}
			return s.c.ListOrgInvitations(ctx, s.org, page)
		})
	cmd.Use, cmd.Aliases = "invitations", []string{"invites"}
	return cmd
}

// memberRevokeCmd is `paddock member revoke INVITATION`.
func (a *app) memberRevokeCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke INVITATION",
		Short: "Revoke a pending invitation to the org (needs an admin)",
		Args:  exactArgs("INVITATION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.RevokeInvitation(cmd.Context(), s.org, args[0]); err != nil {
				return err
			}
			return a.done("revoked", "revoked invitation %s", args[0])
		},
	}
}

// invitationCmd is `paddock invitation`: the caller's own invitations.
func (a *app) invitationCmd() *cobra.Command {
	cmd := groupCmd("invitation", "List, accept and decline your invitations to orgs", "invitations")
	cmd.Long = `List, accept and decline the invitations to orgs sent to your email or
wallet address. Accepting makes you a member of the org with the invited
role (at most the inviter's by then); an invitation whose inviter is no
longer an admin of the org no longer holds. Use your own credential: a
sign-in, or a key you or the installation admin made; a key an org admin
made for you, or one narrowed to a workspace, sees no invitations.`
	ls := listCmd(a, "List your pending invitations", invitationColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Invitation], error) {
			c, err := a.client()
			if err != nil {
				return client.List[client.Invitation]{}, err
			}
			return c.ListInvitations(ctx, page)
		})
	accept := &cobra.Command{
		Use:   "accept INVITATION",
		Short: "Accept an invitation: you become a member of its org",
		Args:  exactArgs("INVITATION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			m, err := c.AcceptInvitation(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printOrgMember(m)
		},
	}
	decline := &cobra.Command{
		Use:   "decline INVITATION",
		Short: "Decline an invitation",
		Args:  exactArgs("INVITATION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			i, err := c.DeclineInvitation(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printInvitation(i)
		},
	}
	cmd.AddCommand(ls, accept, decline)
	return cmd
}
