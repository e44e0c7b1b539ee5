package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// SSH keys: the public keys you sign in to the server's SSH gateway with.

var sshKeyColumns = []column[client.SSHKey]{
	{"ID", func(k client.SSHKey) string { return k.ID }},
	{"NAME", func(k client.SSHKey) string { return k.Name }},
	{"FINGERPRINT", func(k client.SSHKey) string { return k.Fingerprint }},
	{"SCOPE", sshKeyScope},
	{"CREATED", func(k client.SSHKey) string { return ts(k.CreatedAt) }},
}

// sshKeyScope says where a key works: everywhere its user does, or the
// org (and workspace) of the API key that registered it.
func sshKeyScope(k client.SSHKey) string {
	switch {
	case k.OrgID == "":
		return "user"
	case k.WorkspaceID != "":
		return fmt.Sprintf("org %s, workspace %s (%s)", k.OrgID, k.WorkspaceID, k.Role)
	}
	return fmt.Sprintf("org %s (%s)", k.OrgID, k.Role)
}

func (a *app) printSSHKey(k client.SSHKey) error {
	return a.printObject(k, []field{
		{"ID", k.ID},
		{"NAME", k.Name},
		{"FINGERPRINT", k.Fingerprint},
		{"PUBLIC_KEY", k.PublicKey},
		{"SCOPE", sshKeyScope(k)},
		{"CREATED", ts(k.CreatedAt)},
	})
}

func (a *app) sshKeyCmd() *cobra.Command {
	cmd := groupCmd("ssh-key", "Add, list and remove the public keys you sign in to the SSH gateway with", "ssh-keys")
	cmd.Long = `Add, list and remove your public keys for the server's SSH gateway
(ssh -p 2222 <runtime>@<server>). A key authenticates you; the SSH user
name names the runtime. A key added with an API key works only where that
API key does (its org, its workspace, its role); one added with a wallet
sign-in works wherever you are a member.`
	cmd.AddCommand(a.sshKeyAddCmd(), a.sshKeyListCmd(), a.sshKeyRemoveCmd())
	return cmd
}

func (a *app) sshKeyAddCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "add [FILE]",
		Short: "Register a public key (default ~/.ssh/id_ed25519.pub)",
		Long: `Register a public key for your user: FILE holds it in authorized_keys form,
as an ssh-keygen .pub file does (default ~/.ssh/id_ed25519.pub; - reads
standard input). --name names it (default: the key's comment).`,
		Example: `  paddock ssh-key add
  paddock ssh-key add ~/.ssh/work.pub --name work-laptop`,
		Args: rangeArgs(0, 1, "at most one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			} else if home := a.getenv("HOME"); home != "" {
				file = filepath.Join(home, ".ssh", "id_ed25519.pub")
			} else {
				return usagef("name the public key's FILE: HOME is not set")
			}
			var pub []byte
			var err error
			if file == "-" {
				pub, err = io.ReadAll(io.LimitReader(a.env.Stdin, 64<<10))
			} else {
				pub, err = os.ReadFile(file)
			}
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			k, err := c.AddSSHKey(cmd.Context(), client.AddSSHKeyRequest{Name: name, PublicKey: strings.TrimSpace(string(pub))})
			if err != nil {
				return err
			}
			return a.printSSHKey(k)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "a name for the key (default: its comment)")
	return cmd
}

func (a *app) sshKeyListCmd() *cobra.Command {
	return listCmd(a, "List your SSH keys", sshKeyColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.SSHKey], error) {
			c, err := a.client()
			if err != nil {
				return client.List[client.SSHKey]{}, err
			}
			return c.ListSSHKeys(ctx, page)
		})
}

func (a *app) sshKeyRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "rm KEY_ID",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove one of your SSH keys; the connections it opened end shortly",
		Args:    exactArgs("KEY_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.DeleteSSHKey(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.done("removed", "removed SSH key %s", args[0])
		},
	}
}
