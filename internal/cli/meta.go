package cli

import (
	"fmt"
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
			err = printList(a, l, []column[row]{
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
			if err != nil || len(caps.Harnesses) == 0 {
				return err
			}
			fmt.Fprintln(a.env.Stdout)
			err = printList(a, client.List[client.HarnessInfo]{Items: caps.Harnesses}, []column[client.HarnessInfo]{
				{"HARNESS", func(h client.HarnessInfo) string {
					if h.Name == caps.DefaultHarness {
						return h.Name + " (default)"
					}
					return h.Name
				}},
				{"CLI", func(h client.HarnessInfo) string { return h.Binary }},
				{"SECRET", func(h client.HarnessInfo) string { return strings.Join(h.Secrets, " or ") }},
				{"PARSER_FOR", func(h client.HarnessInfo) string { return h.WrittenAgainst }},
				{"IN_DEFAULT_IMAGE", func(h client.HarnessInfo) string { return strconv.FormatBool(h.Installed) }},
				{"IMAGES", func(h client.HarnessInfo) string { return strings.Join(h.Images, ",") }},
			})
			if err != nil || len(caps.SidecarCapabilities) == 0 {
				return err
			}
			fmt.Fprintln(a.env.Stdout)
			return printList(a, client.List[client.SidecarCapability]{Items: caps.SidecarCapabilities}, []column[client.SidecarCapability]{
				{"SIDECAR", func(s client.SidecarCapability) string { return s.Name }},
				{"IMAGE", func(s client.SidecarCapability) string { return s.Image }},
				{"AVAILABLE", func(s client.SidecarCapability) string { return strconv.FormatBool(s.Available) }},
				{"DESCRIPTION", func(s client.SidecarCapability) string { return s.Description }},
			})
		},
	}
}
