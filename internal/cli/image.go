package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

func (a *app) imageCmd() *cobra.Command {
	cmd := groupCmd("image", "See the sandbox images and how far their background builds are", "images")
	cmd.AddCommand(&cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the sandbox images: ready, building (with the step under way), pending, failed or missing",
		Long: `List the sandbox images the server knows: the default one first, the
sidecars', and those its image builder makes in the background once it
serves. PRESENT tells whether runtimes can start on an image now; a
runtime whose image is still being built answers image_building.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			l, err := c.Images(cmd.Context())
			if err != nil {
				return err
			}
			return printList(a, l, []column[client.ImageStatus]{
				{"IMAGE", func(s client.ImageStatus) string { return s.Image }},
				{"STATE", func(s client.ImageStatus) string { return s.State }},
				{"PRESENT", func(s client.ImageStatus) string { return strconv.FormatBool(s.Present) }},
				{"TARGET", func(s client.ImageStatus) string { return s.Target }},
				{"PROGRESS", func(s client.ImageStatus) string { return s.Progress }},
			})
		},
	})
	return cmd
}
