package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var projectColumns = []column[client.Project]{
	{"ID", func(p client.Project) string { return p.ID }},
	{"NAME", func(p client.Project) string { return p.Name }},
	{"RUNTIME", func(p client.Project) string { return p.RuntimeID }},
	{"CREATED", func(p client.Project) string { return ts(p.CreatedAt) }},
}

func (a *app) printProject(p client.Project) error {
	return a.printObject(p, []field{
		{"ID", p.ID},
		{"NAME", p.Name},
		{"DESCRIPTION", p.Description},
		{"RUNTIME", p.RuntimeID},
		{"ORG_ID", p.OrgID},
		{"WORKSPACE_ID", p.WorkspaceID},
		{"CREATED", ts(p.CreatedAt)},
	})
}

func (a *app) projectCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("project", "Create, inspect and delete projects; each has one runtime")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.projectCreateCmd(&sc), a.projectListCmd(&sc), a.projectGetCmd(&sc), a.projectRemoveCmd(&sc))
	return cmd
}

func (a *app) projectCreateCmd(sc *scope) *cobra.Command {
	var (
		description, image, provider, network, cpu, memory string
		pids                                               int64
		idle                                               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project and its runtime",
		Long: `Create a project and its runtime. Runtime settings left unset take the
server's defaults. No compute is provisioned until 'paddock runtime start'.`,
		Example: `  paddock project create agent --org acme --ws dev --image paddock/debian:bookworm --cpu 1 --memory 1G --idle-timeout 30m`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rc := client.RuntimeConfig{Image: image, Provider: provider, Network: network, PidsLimit: pids}
			var err error
			if cpu != "" {
				if rc.CPUMillis, err = parseCPU(cpu); err != nil {
					return err
				}
			}
			if memory != "" {
				if rc.MemoryMB, err = parseMemory(memory); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("idle-timeout") {
				if rc.IdleTimeoutSeconds, err = durationSeconds("idle-timeout", idle, false); err != nil {
					return err
				}
			}
			if pids < 0 {
				return usagef("--pids-limit must not be negative")
			}
			org, ws, err := a.orgAndWorkspace(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			req := client.CreateProjectRequest{Name: args[0], Description: description}
			if rc != (client.RuntimeConfig{}) {
				req.Runtime = &rc
			}
			p, err := c.CreateProject(cmd.Context(), org, ws, req)
			if err != nil {
				return err
			}
			return a.printProject(p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&description, "description", "", "what the project is for")
	f.StringVar(&image, "image", "", "runtime image")
	f.StringVar(&provider, "provider", "", "sandbox provider (see 'paddock capabilities')")
	f.StringVar(&network, "network", "", "egress policy: none, proxy or open")
	f.StringVar(&cpu, "cpu", "", "CPUs: 0.5, 2 or 500m")
	f.StringVar(&memory, "memory", "", "memory: 512 (MB), 512M or 2G")
	f.Int64Var(&pids, "pids-limit", 0, "maximum number of processes")
	f.DurationVar(&idle, "idle-timeout", 0, "pause the sandbox after this long without activity, e.g. 15m")
	return cmd
}

func (a *app) projectListCmd(sc *scope) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the projects of a workspace",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			org, ws, err := a.orgAndWorkspace(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			l, err := c.ListProjects(cmd.Context(), org, ws, page)
			if err != nil {
				return err
			}
			return printList(a, l, projectColumns)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

func (a *app) projectGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get PROJECT",
		Short: "Show a project, by name or id",
		Args:  exactArgs("PROJECT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			org, ws, err := a.orgAndWorkspace(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			p, err := c.GetProject(cmd.Context(), org, ws, args[0])
			if err != nil {
				return err
			}
			return a.printProject(p)
		},
	}
}

func (a *app) projectRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm PROJECT...",
		Aliases: []string{"delete"},
		Short:   "Delete projects, by name or id, after resetting their runtimes",
		Args:    rangeArgs(1, 100, "one or more PROJECTs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			org, ws, err := a.orgAndWorkspace(sc)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			for _, p := range args {
				if err := c.DeleteProject(cmd.Context(), org, ws, p); err != nil {
					return err
				}
				if a.output == outputTable {
					fmt.Fprintf(a.env.Stdout, "deleted project %s\n", p)
				}
			}
			return nil
		},
	}
}
