package cli

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

func (a *app) capabilitiesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "capabilities",
		Short: "Show what the server offers: its providers and their capabilities",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			caps, err := c.Capabilities(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(caps)
			}
			type row struct {
				name string
				client.ProviderCapability
			}
			var l client.List[row]
			for name, p := range caps.Providers {
				l.Items = append(l.Items, row{name, p})
			}
			slices.SortFunc(l.Items, func(x, y row) int { return strings.Compare(x.name, y.name) })
			return printList(a, l, []column[row]{
				{"PROVIDER", func(r row) string {
					if r.name == caps.DefaultProvider {
						return r.name + " (default)"
					}
					return r.name
				}},
				{"ISOLATION", func(r row) string { return r.Isolation }},
				{"PAUSE", func(r row) string { return strconv.FormatBool(r.Pause) }},
				{"AGENT", func(r row) string { return strconv.FormatBool(r.Agent) }},
				{"SNAPSHOT", func(r row) string { return strconv.FormatBool(r.Snapshot) }},
				{"WRITABLE_ROOT", func(r row) string { return strconv.FormatBool(r.WritableRoot) }},
				{"NETWORKS", func(r row) string { return strings.Join(r.Networks, ",") }},
			})
		},
	}
}
