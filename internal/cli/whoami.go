package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var membershipColumns = []column[client.Membership]{
	{"ORG", func(m client.Membership) string { return m.Org }},
	{"ROLE", func(m client.Membership) string { return m.Role }},
	{"ORG_ID", func(m client.Membership) string { return m.OrgID }},
}

// keyScopeOf says what a key reaches: the installation, or an org (named
// when one of the memberships is it) and maybe one workspace of it.
func keyScopeOf(k client.APIKey, memberships []client.Membership) string {
	if k.OrgID == "" {
		return "installation"
	}
	org := k.OrgID
	for _, m := range memberships {
		if m.OrgID == k.OrgID && m.Org != "" {
			org = m.Org
		}
	}
	if k.WorkspaceID != "" {
		return fmt.Sprintf("org %s, workspace %s", org, k.WorkspaceID)
	}
	return "org " + org
}

// whoamiCmd is `paddock whoami`: who the server takes the caller for.
func (a *app) whoamiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Show who the credential is: its user, its key's scope and role, and the user's orgs",
		Long: `Show who the server takes the caller for: the credential (key:<id> for an
API key, session:<id> for a wallet sign-in), the user behind it (none for
the installation admin's keys), whether it is the installation admin, a
key's scope, role and expiry, and the orgs the user belongs to, with the
role in each.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			me, err := c.Me(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				if me.Memberships == nil {
					me.Memberships = []client.Membership{}
				}
				return a.printJSON(me)
			}
			var u client.User
			if me.User != nil {
				u = *me.User
			}
			fields := []field{
				{"CREDENTIAL", me.Credential},
				{"USER", userHandle(u)},
				{"USER_ID", u.ID},
				{"INSTALLATION_ADMIN", strconv.FormatBool(me.Installation)},
			}
			if k := me.Key; k != nil {
				fields = append(fields,
					field{"KEY_NAME", k.Name},
					field{"KEY_SCOPE", keyScopeOf(*k, me.Memberships)},
					field{"KEY_ROLE", k.Role},
					field{"KEY_EXPIRES", tsp(k.ExpiresAt)},
				)
			}
			if err := a.printObject(me, fields); err != nil {
				return err
			}
			fmt.Fprintln(a.env.Stdout)
			return printList(a, client.List[client.Membership]{Items: me.Memberships}, membershipColumns)
		},
	}
}
