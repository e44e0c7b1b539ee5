package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var capabilityVersionColumns = []column[client.CapabilityVersion]{
	{"NAME", func(v client.CapabilityVersion) string { return v.Name }},
	{"VERSION", func(v client.CapabilityVersion) string { return v.Version }},
	{"SHIPS", func(v client.CapabilityVersion) string { return contentsOf(v.Contents) }},
	{"DESCRIPTION", func(v client.CapabilityVersion) string { return oneLine(v.Description, 60) }},
}

// contentsOf sums up what a bundle ships: "2 skills, 1 mcp server".
func contentsOf(c client.CapabilityContents) string {
	var out []string
	for _, k := range []struct {
		what string
		n    int
	}{
		{"agent", len(c.Agents)}, {"skill", len(c.Skills)}, {"tool", len(c.Tools)},
		{"mcp server", len(c.MCPServers)}, {"worker", len(c.Workers)},
		{"setup script", len(c.Setup)}, {"check", len(c.Checks)}, {"flag", len(c.Flags)},
	} {
		switch k.n {
		case 0:
		case 1:
			out = append(out, "1 "+k.what)
		default:
			out = append(out, fmt.Sprintf("%d %ss", k.n, k.what))
		}
	}
	return strings.Join(out, ", ")
}

func (a *app) catalogCmd() *cobra.Command {
	cmd := groupCmd("catalog", "List the capabilities built into paddock")
	cmd.AddCommand(&cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the capabilities built into paddock, every version",
		Long: `List the capabilities built into paddock, every version, and what each ships.
Install one on a runtime with 'paddock capability install RUNTIME NAME'.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			vs, err := c.Catalog(cmd.Context())
			if err != nil {
				return err
			}
			return printList(a, client.List[client.CapabilityVersion]{Items: vs}, capabilityVersionColumns)
		},
	})
	return cmd
}
