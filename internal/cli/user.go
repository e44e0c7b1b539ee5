package cli

import (
	"cmp"
	"context"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// userHandle is what people call a user: the email, else the wallet address,
// else the name, else the id.
func userHandle(u client.User) string { return cmp.Or(u.Email, u.Wallet, u.Name, u.ID) }

var userColumns = []column[client.User]{
	{"ID", func(u client.User) string { return u.ID }},
	{"EMAIL", func(u client.User) string { return u.Email }},
	{"WALLET", func(u client.User) string { return u.Wallet }},
	{"NAME", func(u client.User) string { return u.Name }},
	{"CREATED", func(u client.User) string { return ts(u.CreatedAt) }},
}

func (a *app) printUser(u client.User) error {
	return a.printObject(u, []field{
		{"ID", u.ID},
		{"EMAIL", u.Email},
		{"WALLET", u.Wallet},
		{"NAME", u.Name},
		{"CREATED", ts(u.CreatedAt)},
	})
}

// userCmd is `paddock user`: the installation's users, for its admin.
func (a *app) userCmd() *cobra.Command {
	cmd := groupCmd("user", "Create and manage users (needs an installation admin key)", "users")
	cmd.Long = `Create and manage the installation's users: people or machines known by an
email address, a wallet address (which signs in with 'paddock login
--wallet-key-file'), or both. Every verb needs an installation admin key. A
USER is a user id, an email address or a wallet address.

Only the installation admin makes users. Org admins invite people to their
org with 'paddock member add': an invitation to an address no user has waits
until a user with it is made here.`
	cmd.AddCommand(a.userCreateCmd(), a.userListCmd(), a.userGetCmd(), a.userSetCmd(), a.userRemoveCmd())
	return cmd
}

func (a *app) userCreateCmd() *cobra.Command {
	var req client.CreateUserRequest
	cmd := &cobra.Command{
		Use:   "create (--email EMAIL | --wallet ADDRESS) [--name NAME]",
		Short: "Create a user with an email address, a wallet address or both",
		Example: `  paddock user create --email ann@example.com --name Ann
  paddock user create --wallet 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Email == "" && req.Wallet == "" {
				return usagef("a user needs --email or --wallet (or both)")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			u, err := c.CreateUser(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.printUser(u)
		},
	}
	userFlags(cmd, &req.Email, &req.Wallet, &req.Name)
	return cmd
}

// userFlags adds --email, --wallet and --name.
func userFlags(cmd *cobra.Command, email, wallet, name *string) {
	cmd.Flags().StringVar(email, "email", "", "the user's email address")
	cmd.Flags().StringVar(wallet, "wallet", "", "the user's Ethereum wallet address (0x and 40 hex digits)")
	cmd.Flags().StringVar(name, "name", "", "what to call the user")
}

func (a *app) userListCmd() *cobra.Command {
	return listCmd(a, "List the installation's users", userColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.User], error) {
			c, err := a.client()
			if err != nil {
				return client.List[client.User]{}, err
			}
			return c.ListUsers(ctx, page)
		})
}

func (a *app) userGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get USER",
		Short: "Show a user, by id, email or wallet address",
		Args:  exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			u, err := c.GetUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printUser(u)
		},
	}
}

func (a *app) userSetCmd() *cobra.Command {
	var email, wallet, name string
	cmd := &cobra.Command{
		Use:   "set USER [--email EMAIL] [--wallet ADDRESS] [--name NAME]",
		Short: "Change a user's email, wallet or name; an empty value clears it",
		Long: `Change a user's email address, wallet address or name. What is not given
stays; an empty value ("") clears it, but a user keeps an email or a wallet.`,
		Example: `  paddock user set ann@example.com --wallet 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf
  paddock user set 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf --name ""`,
		Args: exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req client.UpdateUserRequest
			set := func(flag string, dst **string, v string) {
				if cmd.Flags().Changed(flag) {
					*dst = &v
				}
			}
			set("email", &req.Email, email)
			set("wallet", &req.Wallet, wallet)
			set("name", &req.Name, name)
			if req.Email == nil && req.Wallet == nil && req.Name == nil {
				return usagef("nothing to change: give --email, --wallet or --name")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			u, err := c.UpdateUser(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			return a.printUser(u)
		},
	}
	userFlags(cmd, &email, &wallet, &name)
	return cmd
}

func (a *app) userRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "rm USER",
		Aliases: []string{"delete"},
		Short:   "Delete a user",
		Args:    exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.DeleteUser(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.done("deleted", "deleted user %s", args[0])
		},
	}
}
