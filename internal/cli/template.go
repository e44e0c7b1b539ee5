package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var templateColumns = []column[client.Template]{
	{"NAME", func(t client.Template) string { return t.Name }},
	{"IMAGE", func(t client.Template) string { return orDefault(t.Runtime.Image) }},
	{"HARNESS", func(t client.Template) string { return orDefault(t.Runtime.Harness) }},
	{"MODEL", func(t client.Template) string { return orDefault(t.Runtime.Model) }},
	{"CREATED", func(t client.Template) string { return ts(t.CreatedAt) }},
}

// orDefault is v, or "(default)" for a setting a template leaves to the
// server.
func orDefault(v string) string {
	if v == "" {
		return "(default)"
	}
	return v
}

func (a *app) printTemplate(t client.Template) error {
	c := t.Runtime
	num := func(v int64) string {
		if v == 0 {
			return orDefault("")
		}
		return fmt.Sprint(v)
	}
	network := ""
	if c.Network != nil {
		network = c.Network.Mode
		if len(c.Network.Allow) > 0 {
			network += " allow " + strings.Join(c.Network.Allow, ",")
		}
		if len(c.Network.Deny) > 0 {
			network += " deny " + strings.Join(c.Network.Deny, ",")
		}
	}
	return a.printObject(t, []field{
		{"ID", t.ID},
		{"NAME", t.Name},
		{"DESCRIPTION", t.Description},
		{"IMAGE", orDefault(c.Image)},
		{"PROVIDER", orDefault(c.Provider)},
		{"CPU_MILLIS", num(c.CPUMillis)},
		{"MEMORY_MB", num(c.MemoryMB)},
		{"PIDS_LIMIT", num(c.PidsLimit)},
		{"DISK_MB", num(c.DiskMB)},
		{"NETWORK", orDefault(network)},
		{"SECRETS", strings.Join(c.Secrets, ",")},
		{"HARNESS", orDefault(c.Harness)},
		{"MODEL", orDefault(c.Model)},
		{"IDLE_TIMEOUT_SECONDS", num(c.IdleTimeoutSeconds)},
		{"ARCHIVE_AFTER_SECONDS", num(c.ArchiveAfterSeconds)},
		{"CREATED", ts(t.CreatedAt)},
	})
}

func (a *app) templateCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("template", "Create, list and delete templates: what a project's runtime starts from")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.templateCreateCmd(&sc), a.templateListCmd(&sc), a.templateGetCmd(&sc), a.templateRemoveCmd(&sc),
		a.templateBuildCmd(&sc), a.templateBuildsCmd(&sc))
	return cmd
}

func (a *app) templateCreateCmd(sc *scope) *cobra.Command {
	var (
		description string
		settings    runtimeSettings
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a template",
		Long: `Create a template: an image, resources, network, secrets, harness and
model, and idle and archive settings, kept under a name in a workspace.
'paddock project create NAME --template T' makes a project from it; the
flags given there override the template's. Settings left unset take the
server's defaults when a project is made. The template is checked as a
project's runtime is (allow-list, bounds, secrets, harness).`,
		Example: `  paddock template create coder --image paddock/debian:bookworm --cpu 2 --memory 4G --harness codex --model gpt-5-codex --secret openai
  paddock template create scraper --network proxy --allow '*.example.com' --idle-timeout 10m`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rc, set, err := settings.config(cmd)
			if err != nil {
				return err
			}
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			req := client.CreateTemplateRequest{Name: args[0], Description: description}
			if set {
				req.Runtime = &rc
			}
			t, err := s.c.CreateTemplate(cmd.Context(), s.org, s.ws, req)
			if err != nil {
				return err
			}
			return a.printTemplate(t)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what the template is for")
	settings.register(cmd, true)
	return cmd
}

func (a *app) templateListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the templates of a workspace", templateColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Template], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.Template]{}, err
			}
			return s.c.ListTemplates(ctx, s.org, s.ws, page)
		})
}

func (a *app) templateGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get TEMPLATE",
		Short: "Show a template, by name or id",
		Args:  exactArgs("TEMPLATE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			t, err := s.c.GetTemplate(cmd.Context(), s.org, s.ws, args[0])
			if err != nil {
				return err
			}
			return a.printTemplate(t)
		},
	}
}

func (a *app) templateRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm TEMPLATE...",
		Aliases: []string{"delete"},
		Short:   "Delete templates, by name or id; projects made from them keep their settings",
		Long: `Delete templates, by name or id. Projects made from them keep their
settings. The images a template's builds made ('paddock template build')
are removed with it, each unless a runtime or another template of the
org still names it.`,
		Args: rangeArgs(1, 100, "one or more TEMPLATEs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			for _, t := range args {
				if err := s.c.DeleteTemplate(cmd.Context(), s.org, s.ws, t); err != nil {
					return err
				}
				if a.output == outputTable {
					fmt.Fprintf(a.env.Stdout, "deleted template %s\n", t)
				}
			}
			return nil
		},
	}
}
