package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var keyColumns = []column[client.APIKey]{
	{"ID", func(k client.APIKey) string { return k.ID }},
	{"NAME", func(k client.APIKey) string { return k.Name }},
	{"PREFIX", func(k client.APIKey) string { return k.Prefix }},
	{"ROLE", func(k client.APIKey) string { return k.Role }},
	{"USER_ID", func(k client.APIKey) string { return k.UserID }},
	{"WORKSPACE_ID", func(k client.APIKey) string { return k.WorkspaceID }},
	{"EXPIRES", func(k client.APIKey) string { return tsp(k.ExpiresAt) }},
	{"REVOKED", func(k client.APIKey) string { return tsp(k.RevokedAt) }},
	{"CREATED", func(k client.APIKey) string { return ts(k.CreatedAt) }},
}

func keyFields(k client.APIKey) []field {
	return []field{
		{"ID", k.ID},
		{"NAME", k.Name},
		{"PREFIX", k.Prefix},
		{"ROLE", k.Role},
		{"ORG_ID", k.OrgID},
		{"USER_ID", k.UserID},
		{"WORKSPACE_ID", k.WorkspaceID},
		{"EXPIRES", tsp(k.ExpiresAt)},
		{"REVOKED", tsp(k.RevokedAt)},
		{"CREATED", ts(k.CreatedAt)},
	}
}

// printCreatedKey prints a new key with its plaintext, and says that it
// is shown this once: on stdout under the table, on stderr with JSON.
func (a *app) printCreatedKey(k client.CreatedKey) error {
	if err := a.printObject(k, append(keyFields(k.APIKey), field{"KEY", k.Key})); err != nil {
		return err
	}
	const note = "Store the key now: it will not be shown again."
	if a.output == outputJSON {
		fmt.Fprintln(a.env.Stderr, note)
		return nil
	}
	_, err := fmt.Fprintln(a.env.Stdout, "\n"+note)
	return err
}

// keyScope is where a key command acts: an org, or with --installation
// the installation itself.
type keyScope struct {
	scope
	installation bool
}

// keySession resolves a client and, without --installation, the org.
func (a *app) keySession(sc *keyScope) (session, error) {
	if !sc.installation {
		return a.orgSession(&sc.scope)
	}
	if sc.org != "" {
		return session{}, usagef("--org and --installation name different keys; pass one")
	}
	c, err := a.client()
	if err != nil {
		return session{}, err
	}
	return session{c: c}, nil
}

func (a *app) keyCmd() *cobra.Command {
	var sc keyScope
	cmd := groupCmd("key", "Create, list and revoke API keys", "keys")
	scopeFlags(cmd, &sc.scope, false)
	cmd.PersistentFlags().BoolVar(&sc.installation, "installation", false, "the installation's own keys, of no org; revoke takes any key of the installation (needs an installation admin key)")
	cmd.AddCommand(a.keyCreateCmd(&sc), a.keyListCmd(&sc), a.keyRevokeCmd(&sc))
	return cmd
}

// parseExpires reads --expires into req: a duration (30d, 720h) is sent
// as expires_in, an RFC 3339 time as expires_at.
func parseExpires(s string, req *client.CreateKeyRequest) error {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		req.ExpiresAt = &t
		return nil
	}
	if d, ok := parseDays(s); ok && d > 0 {
		req.ExpiresIn = d.String()
		return nil
	}
	return usagef("--expires %q: want how long the key lasts (30d, 720h) or when it expires (2026-12-31T00:00:00Z)", s)
}

func (a *app) keyCreateCmd(sc *keyScope) *cobra.Command {
	var (
		req     client.CreateKeyRequest
		expires string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key and print it once",
		Long: `Create an API key in the org and print it once: it will not be shown again.

The key belongs to --member (an email address, a wallet address or a user
id; default: you, but an installation admin key has no user and must name
one) and acts with --role, at most the member's role and yours (default:
the member's). --ws narrows it to one workspace. It expires after --expires,
a duration (30d, 720h) or at an RFC 3339 time; by default never.

With --installation it is an installation admin key instead: of no org and
no user, allowed everything. Making one needs an installation admin key, and
it takes only --name.`,
		Example: `  paddock key create --name ci --role member --ws dev --expires 30d
  paddock key create --name laptop --expires 2026-12-31T00:00:00Z
  paddock key create --name bot --member 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf --role viewer
  paddock key create --installation --name ops`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sc.installation {
				for _, name := range []string{"member", "role", "ws", "expires"} {
					if cmd.Flags().Changed(name) {
						return usagef("--%s does not apply to an installation key", name)
					}
				}
			} else if expires != "" {
				if err := parseExpires(expires, &req); err != nil {
					return err
				}
			}
			s, err := a.keySession(sc)
			if err != nil {
				return err
			}
			var k client.CreatedKey
			if sc.installation {
				k, err = s.c.CreateInstallationKey(cmd.Context(), req.Name)
			} else {
				k, err = s.c.CreateKey(cmd.Context(), s.org, req)
			}
			if err != nil {
				return err
			}
			return a.printCreatedKey(k)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "a name for the key")
	f.StringVar(&req.Member, "member", "", "the key's holder: an email address, a wallet address or a user id (default: you)")
	f.StringVar(&req.Role, "role", "", "viewer, member, admin or owner, at most the holder's and yours (default: the holder's)")
	f.StringVar(&req.Workspace, "ws", "", "narrow the key to this workspace (default: the whole org)")
	f.StringVar(&expires, "expires", "", "expire after a duration (30d, 720h) or at an RFC 3339 time (default: never)")
	return cmd
}

func (a *app) keyListCmd(sc *keyScope) *cobra.Command {
	return listCmd(a, "List API keys, never the keys themselves: yours, or all of the org's for an admin", keyColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.APIKey], error) {
			s, err := a.keySession(sc)
			if err != nil {
				return client.List[client.APIKey]{}, err
			}
			if sc.installation {
				return s.c.ListInstallationKeys(ctx, page)
			}
			return s.c.ListKeys(ctx, s.org, page)
		})
}

func (a *app) keyRevokeCmd(sc *keyScope) *cobra.Command {
	return &cobra.Command{
		Use:     "revoke KEY",
		Aliases: []string{"rm"},
		Short:   "Revoke an API key: yours, or any of the org's for an admin; it is refused from then on",
		Long: `Revoke an API key, named by its id or by its prefix (pdk_ and six characters,
as 'paddock key ls' shows), or given whole (only its prefix is used, and
printed). The key is refused from then on.`,
		Example: `  paddock key revoke pdk_3a9f1c
  paddock key revoke 0b8e2c1a-5d4f-4e8a-9c7b-2f1e0d3c4b5a`,
		Args: exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.keySession(sc)
			if err != nil {
				return err
			}
			id, err := a.keyID(cmd.Context(), s, sc.installation, args[0])
			if err != nil {
				return err
			}
			if sc.installation {
				err = s.c.RevokeInstallationKey(cmd.Context(), id)
			} else {
				err = s.c.RevokeKey(cmd.Context(), s.org, id)
			}
			if err != nil {
				return err
			}
			return a.done("revoked", "revoked key %s", id)
		},
	}
}

// keyID resolves a KEY argument: a key id as is, a key's prefix (pdk_...,
// as key ls shows) or the whole key to the id of the one key of the org
// (or installation) that has that prefix.
func (a *app) keyID(ctx context.Context, s session, installation bool, arg string) (string, error) {
	if !strings.HasPrefix(arg, keyPrefix) {
		return arg, nil
	}
	// A whole key is taken by its prefix; no more of it than the prefix
	// is ever printed.
	shown := arg[:min(len(arg), shownKeyLen)]
	var ids []string
	page := client.ListOptions{Limit: 100}
	for {
		var l client.List[client.APIKey]
		var err error
		if installation {
			l, err = s.c.ListInstallationKeys(ctx, page)
		} else {
			l, err = s.c.ListKeys(ctx, s.org, page)
		}
		if err != nil {
			return "", err
		}
		for _, k := range l.Items {
			if k.Prefix != "" && strings.HasPrefix(arg, k.Prefix) && k.RevokedAt == nil {
				ids = append(ids, k.ID)
			}
		}
		if l.NextCursor == "" {
			break
		}
		page.Cursor = l.NextCursor
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no key with prefix %s that is not revoked (see paddock key ls)", shown)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d keys have the prefix %s; revoke one by its id (see paddock key ls)", len(ids), shown)
}
