package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// sessionPrefix starts every session token (PASETO v4.local); an API key
// starts with pdk_.
const sessionPrefix = "v4.local."

// keyPrefix starts every API key, and the prefix key ls shows.
const keyPrefix = "pdk_"

// shownKeyLen is the length of the prefix key ls shows (keyPrefix and six
// characters): as much of a key as may be printed.
const shownKeyLen = len(keyPrefix) + 6

func (a *app) loginCmd() *cobra.Command {
	var (
		fromStdin bool
		keyFile   string
		sc        scope
	)
	cmd := &cobra.Command{
		Use:   "login (--api-key KEY | --api-key-stdin | --wallet-key-file FILE) [--url URL]",
		Short: "Sign in with an API key or a wallet and save the credential to the config file",
		Long: `Check an API key against a paddock server, or sign in with a wallet, and
save the URL and the credential to the config file (mode 0600), so that
later commands need neither.

--wallet-key-file signs in as the user who owns a wallet address: FILE holds
the wallet's secp256k1 private key in hex (0x optional) and must be readable
by its owner only. The server's challenge is signed (EIP-191 personal_sign)
and the session token it answers is saved in place of an API key; it lasts
until it expires or 'paddock logout' ends it. The key never leaves this
machine.

--org and --ws also save a default org and workspace. Without --org, a
credential that sees exactly one org makes it the default.`,
		Example: `  paddock login --url http://127.0.0.1:8080 --api-key pdk_...
  echo "$KEY" | paddock login --url https://paddock.example.com --api-key-stdin --org acme --ws dev
  paddock login --url https://paddock.example.com --wallet-key-file ~/.paddock/wallet.key`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.login(cmd.Context(), fromStdin, keyFile, sc)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&fromStdin, "api-key-stdin", false, "read the API key from standard input")
	f.StringVar(&keyFile, "wallet-key-file", "", "sign in with the wallet whose hex private key this file holds (mode 0600)")
	f.StringVar(&sc.org, "org", "", "save a default org")
	f.StringVar(&sc.ws, "ws", "", "save a default workspace")
	return cmd
}

// login checks the credential login was given (an API key, read from
// stdin when fromStdin, or a wallet's sign-in with the key in keyFile),
// saves it with the server's URL and the defaults of sc, and ends the
// session it replaces.
func (a *app) login(ctx context.Context, fromStdin bool, keyFile string, sc scope) error {
	old, err := a.readConfig(true)
	if err != nil {
		return err
	}
	a.cfg = old
	url := a.serverURL()
	key, signedIn, err := a.loginCredential(ctx, url, fromStdin, keyFile)
	if err != nil {
		return err
	}
	c, err := a.newClient(url, key)
	if err != nil {
		return err
	}
	orgs, err := c.ListOrgs(ctx, client.ListOptions{Limit: 2})
	if err != nil {
		return err
	}
	cfg := *old
	if cfg.URL != c.BaseURL() {
		// Defaults of another server mean nothing here.
		cfg.Org, cfg.Workspace = "", ""
	}
	cfg.URL, cfg.APIKey, cfg.SessionToken = c.BaseURL(), key, ""
	if signedIn != nil || strings.HasPrefix(key, sessionPrefix) {
		cfg.APIKey, cfg.SessionToken = "", key
	}
	dropped, err := chooseDefaults(ctx, c, &cfg, sc, orgs)
	if err != nil {
		return err
	}
	path, err := a.writeConfig(&cfg)
	if err != nil {
		return err
	}
	if old.SessionToken != "" && old.SessionToken != cfg.SessionToken && strings.TrimRight(old.URL, "/") == cfg.URL {
		// The session this login replaces would live on unused
		// until it expired: end it (at best; it may have ended).
		if prev, err := a.newClient(old.URL, old.SessionToken); err == nil {
			_ = prev.SignOut(ctx)
		}
	}
	return a.printLogin(cfg, path, signedIn, dropped)
}

// loginCredential is the credential login checks against the server at
// url: a wallet's session token (signedIn) with keyFile, else the API key
// of --api-key, of PADDOCK_API_KEY or, when fromStdin, of stdin.
func (a *app) loginCredential(ctx context.Context, url string, fromStdin bool, keyFile string) (key string, signedIn *client.AuthSession, err error) {
	if keyFile != "" {
		if a.apiKey != "" || fromStdin {
			return "", nil, usagef("pass --wallet-key-file or an API key, not both")
		}
		s, err := a.walletSignIn(ctx, url, keyFile)
		if err != nil {
			return "", nil, err
		}
		key, signedIn = s.Token, &s
	} else {
		key = first(a.apiKey, a.getenv("PADDOCK_API_KEY"))
		if fromStdin {
			if key != "" && a.apiKey != "" {
				return "", nil, usagef("pass --api-key or --api-key-stdin, not both")
			}
			if key, err = readKey(a.env.Stdin); err != nil {
				return "", nil, err
			}
		}
	}
	if key == "" {
		return "", nil, usagef("no API key: pass --api-key, --api-key-stdin or --wallet-key-file, or set PADDOCK_API_KEY")
	}
	return key, signedIn, nil
}

// chooseDefaults sets cfg's default org and workspace after a login with
// c: those named by --org and --ws (a workspace belongs to its org, so a
// new org drops the old workspace), else the old ones the credential can
// still see, else the credential's only org. It says which old defaults it
// dropped.
func chooseDefaults(ctx context.Context, c *client.Client, cfg *fileConfig, sc scope, orgs client.List[client.Org]) ([]string, error) {
	var dropped []string
	var err error
	switch {
	case sc.org != "":
		if _, err := c.GetOrg(ctx, sc.org); err != nil {
			return nil, err
		}
		if sc.org != cfg.Org {
			cfg.Workspace = ""
		}
		cfg.Org = sc.org
	default:
		// Defaults the new credential cannot see would fail the next
		// command for an org or workspace the user never named here.
		if dropped, err = keepVisibleDefaults(ctx, c, cfg); err != nil {
			return nil, err
		}
		if cfg.Org == "" && len(orgs.Items) == 1 && orgs.NextCursor == "" {
			cfg.Org = orgs.Items[0].Name
		}
	}
	if sc.ws != "" {
		if cfg.Org == "" {
			return nil, usagef("--ws needs an org: pass --org too")
		}
		if _, err := c.GetWorkspace(ctx, cfg.Org, sc.ws); err != nil {
			return nil, err
		}
		cfg.Workspace = sc.ws
	}
	return dropped, nil
}

// printLogin says where a login saved its credential and which defaults it
// keeps.
func (a *app) printLogin(cfg fileConfig, path string, signedIn *client.AuthSession, dropped []string) error {
	if a.output == outputJSON {
		out := map[string]string{"url": cfg.URL, "config": path, "org": cfg.Org, "workspace": cfg.Workspace}
		if signedIn != nil {
			out["user"], out["user_id"], out["expires_at"] = userHandle(signedIn.User), signedIn.User.ID, ts(signedIn.ExpiresAt)
		}
		return a.printJSON(out)
	}
	if signedIn != nil {
		fmt.Fprintf(a.env.Stdout, "Signed in to %s as %s; session saved to %s\n", cfg.URL, userHandle(signedIn.User), path)
		if !signedIn.ExpiresAt.IsZero() {
			fmt.Fprintf(a.env.Stdout, "Session expires: %s\n", ts(signedIn.ExpiresAt))
		}
	} else {
		fmt.Fprintf(a.env.Stdout, "Logged in to %s; saved to %s\n", cfg.URL, path)
	}
	for _, d := range dropped {
		fmt.Fprintf(a.env.Stdout, "Dropped the default %s: this credential cannot see it\n", d)
	}
	if cfg.Org != "" {
		fmt.Fprintf(a.env.Stdout, "Default org: %s\n", cfg.Org)
	}
	if cfg.Workspace != "" {
		fmt.Fprintf(a.env.Stdout, "Default workspace: %s\n", cfg.Workspace)
	}
	return nil
}

// keepVisibleDefaults clears cfg's default org and workspace where the
// credential of c cannot see them (404 or 403), and says which it dropped.
func keepVisibleDefaults(ctx context.Context, c *client.Client, cfg *fileConfig) ([]string, error) {
	hidden := func(err error) bool {
		return errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrPermissionDenied)
	}
	var dropped []string
	if cfg.Org != "" {
		if _, err := c.GetOrg(ctx, cfg.Org); hidden(err) {
			dropped = append(dropped, "org "+cfg.Org)
			if cfg.Workspace != "" {
				dropped = append(dropped, "workspace "+cfg.Workspace)
			}
			cfg.Org, cfg.Workspace = "", ""
		} else if err != nil {
			return nil, err
		}
	}
	if cfg.Org != "" && cfg.Workspace != "" {
		if _, err := c.GetWorkspace(ctx, cfg.Org, cfg.Workspace); hidden(err) {
			dropped = append(dropped, "workspace "+cfg.Workspace)
			cfg.Workspace = ""
		} else if err != nil {
			return nil, err
		}
	}
	return dropped, nil
}

// readKey reads an API key: the first line of r, trimmed.
func readKey(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read the API key from standard input: %w", err)
	}
	return strings.TrimSpace(line), nil
}

// logoutCmd is `paddock logout`: it forgets the config file's credential,
// and ends a session first.
func (a *app) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "End the saved wallet session and remove the credential from the config file",
		Long: `Remove the credential saved by 'paddock login' from the config file; the URL
and the default org and workspace stay.

A session token (from --wallet-key-file) is ended on the server first, so it
is refused from then on; if the server cannot be told, nothing is removed
and logout may be run again. An API key is only forgotten here: it still
works until revoked ('paddock key revoke').`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.readConfig(true)
			if err != nil {
				return err
			}
			a.cfg = cfg
			path, _ := a.configFile()
			var removed []string
			if cfg.SessionToken != "" {
				// The token goes only to the server that issued it,
				// whatever --url says.
				c, err := a.newClient(first(cfg.URL, defaultURL), cfg.SessionToken)
				if err != nil {
					return err
				}
				// A session that expired or was ended already is as good
				// as ended.
				if err := c.SignOut(cmd.Context()); err != nil && !errors.Is(err, client.ErrUnauthenticated) {
					return err
				}
				removed = append(removed, "session_token")
			}
			if cfg.APIKey != "" {
				removed = append(removed, "api_key")
			}
			if len(removed) > 0 {
				next := *cfg
				next.APIKey, next.SessionToken = "", ""
				if path, err = a.writeConfig(&next); err != nil {
					return err
				}
			}
			if a.output == outputJSON {
				return a.printJSON(map[string]any{"config": path, "removed": append([]string{}, removed...)})
			}
			if len(removed) == 0 {
				_, err := fmt.Fprintln(a.env.Stdout, "Not logged in: no credential saved")
				return err
			}
			if cfg.SessionToken != "" {
				fmt.Fprintf(a.env.Stdout, "Signed out of %s; removed the session token from %s\n", cfg.URL, path)
			}
			if cfg.APIKey != "" {
				fmt.Fprintf(a.env.Stdout, "Removed the API key from %s; it works until revoked\n", path)
			}
			return nil
		},
	}
}
