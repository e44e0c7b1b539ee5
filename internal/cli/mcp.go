package cli

import (
	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/version"
)

// mcpCmd serves paddock's MCP tools over stdio, with the CLI's server and
// credential.
func (a *app) mcpCmd() *cobra.Command {
	sc := &scope{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve paddock's tools to an MCP client over stdio",
		Long: `Serve the Model Context Protocol over standard input and output, for an MCP
client (an agent, an IDE) to start as a subprocess. Its tools (list_runtimes,
create_runtime, start_runtime, pause_runtime, resume_runtime, delete_runtime,
exec, read_file, write_file, list_files, preview_url, prompt) call the paddock
server with this CLI's URL and credential, so they may do what that key may.

--org and --ws (else PADDOCK_ORG and PADDOCK_WS, else the config file) are the
tools' default org and workspace; a tool call may name others.`,
		Example: `  # In an MCP client's configuration:
  {"command": "paddock", "args": ["mcp", "--org", "acme", "--ws", "dev"],
   "env": {"PADDOCK_URL": "http://127.0.0.1:8080", "PADDOCK_API_KEY": "pdk_..."}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			org, ws := first(sc.org, a.getenv("PADDOCK_ORG"), a.cfg.Org), first(sc.ws, a.getenv("PADDOCK_WS"), a.cfg.Workspace)
			o := mcp.Options{Org: org, Workspace: ws, Version: version.Version}
			return mcp.ServeStdio(cmd.Context(), c, o, a.env.Stdin, a.env.Stdout)
		},
	}
	cmd.Flags().StringVar(&sc.org, "org", "", "the tools' default org (env PADDOCK_ORG)")
	cmd.Flags().StringVar(&sc.ws, "ws", "", "the tools' default workspace (env PADDOCK_WS)")
	return cmd
}
