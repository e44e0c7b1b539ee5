package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

func (a *app) loginCmd() *cobra.Command {
	var (
		fromStdin bool
		sc        scope
	)
	cmd := &cobra.Command{
		Use:   "login --url URL --api-key KEY",
		Short: "Check an API key against a server and save both to the config file",
		Long: `Check an API key against a paddock server and save the URL and the key
to the config file (mode 0600), so that later commands need neither.

--org and --ws also save a default org and workspace. Without --org, a key
that sees exactly one org makes it the default.`,
		Example: `  paddock login --url http://127.0.0.1:8080 --api-key pdk_...
  echo "$KEY" | paddock login --url https://paddock.example.com --api-key-stdin --org acme --ws dev`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			old, err := a.readConfig(true)
			if err != nil {
				return err
			}
			a.cfg = old
			key := first(a.apiKey, a.getenv("PADDOCK_API_KEY"))
			if fromStdin {
				if key != "" && a.apiKey != "" {
					return usagef("pass --api-key or --api-key-stdin, not both")
				}
				if key, err = readKey(a.env.Stdin); err != nil {
					return err
				}
			}
			if key == "" {
				return usagef("no API key: pass --api-key, --api-key-stdin or set PADDOCK_API_KEY")
			}
			url := a.serverURL()
			c, err := a.newClient(url, key)
			if err != nil {
				return err
			}
			orgs, err := c.ListOrgs(cmd.Context(), client.ListOptions{Limit: 2})
			if err != nil {
				return err
			}
			cfg := *old
			if cfg.URL != c.BaseURL() {
				// Defaults of another server mean nothing here.
				cfg.Org, cfg.Workspace = "", ""
			}
			cfg.URL, cfg.APIKey = c.BaseURL(), key
			if sc.org != "" {
				if _, err := c.GetOrg(cmd.Context(), sc.org); err != nil {
					return err
				}
				cfg.Org = sc.org
			} else if cfg.Org == "" && len(orgs.Items) == 1 && orgs.NextCursor == "" {
				cfg.Org = orgs.Items[0].Name
			}
			if sc.ws != "" {
				if cfg.Org == "" {
					return usagef("--ws needs an org: pass --org too")
				}
				if _, err := c.GetWorkspace(cmd.Context(), cfg.Org, sc.ws); err != nil {
					return err
				}
				cfg.Workspace = sc.ws
			}
			path, err := a.writeConfig(&cfg)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(map[string]string{
					"url": cfg.URL, "config": path, "org": cfg.Org, "workspace": cfg.Workspace,
				})
			}
			fmt.Fprintf(a.env.Stdout, "Logged in to %s; saved to %s\n", cfg.URL, path)
			if cfg.Org != "" {
				fmt.Fprintf(a.env.Stdout, "Default org: %s\n", cfg.Org)
			}
			if cfg.Workspace != "" {
				fmt.Fprintf(a.env.Stdout, "Default workspace: %s\n", cfg.Workspace)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&fromStdin, "api-key-stdin", false, "read the API key from standard input")
	f.StringVar(&sc.org, "org", "", "save a default org")
	f.StringVar(&sc.ws, "ws", "", "save a default workspace")
	return cmd
}

// readKey reads an API key: the first line of r, trimmed.
func readKey(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read the API key from standard input: %w", err)
	}
	return strings.TrimSpace(line), nil
}
