package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

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
		description, template string
		start                 bool
		settings              runtimeSettings
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project and its runtime",
		Long: `Create a project and its runtime. Runtime settings left unset take the
template's (--template), else the server's defaults. No compute is
provisioned until 'paddock runtime start', or at once with --start; a start
that fails leaves the project, says why and exits 1.`,
		Example: `  paddock project create agent --org acme --ws dev --image paddock/debian:bookworm --cpu 1 --memory 1G --idle-timeout 30m
  paddock project create agent --network proxy --allow pypi.org --allow files.pythonhosted.org
  paddock project create web --port 3000:public --port 8000
  paddock project create agent --template coder --memory 8G --start`,
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
			req := client.CreateProjectRequest{Name: args[0], Description: description, Template: template, Start: start}
			if set {
				req.Runtime = &rc
			}
			p, err := s.c.CreateProject(cmd.Context(), s.org, s.ws, req)
			if err != nil {
				return err
			}
			if err := a.printProject(p); err != nil {
				return err
			}
			if e := p.StartError; e != nil {
				return fmt.Errorf("project %s was created, but its runtime did not start: %s (%s)", p.Name, e.Message, e.Code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&description, "description", "", "what the project is for")
	f.StringVar(&template, "template", "", "the template, by name or id, the runtime starts from; the flags given override its settings")
	f.BoolVar(&start, "start", false, "start the runtime once the project is created")
	settings.register(cmd, true)
	return cmd
}

func (a *app) projectListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the projects of a workspace", projectColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Project], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.Project]{}, err
			}
			return s.c.ListProjects(ctx, s.org, s.ws, page)
		})
}

func (a *app) projectGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get PROJECT",
		Short: "Show a project, by name or id",
		Args:  exactArgs("PROJECT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			p, err := s.c.GetProject(cmd.Context(), s.org, s.ws, args[0])
			if err != nil {
				return err
			}
			return a.printProject(p)
		},
	}
}

func (a *app) projectRemoveCmd(sc *scope) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:     "rm PROJECT...",
		Aliases: []string{"delete"},
		Short:   "Delete projects, by name or id, after resetting their runtimes",
		Long: `Delete projects, by name or id. Each project's runtime is reset first and its
workspace deleted with it. A runtime that has a sandbox (running, paused or
starting) is only deleted with --force, or after you confirm on a terminal,
as docker rm does with a running container.`,
		Args: rangeArgs(1, 100, "one or more PROJECTs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			for _, p := range args {
				if !force {
					if err := a.confirmRemove(cmd.Context(), s, p); err != nil {
						return err
					}
				}
				if err := s.c.DeleteProject(cmd.Context(), s.org, s.ws, p); err != nil {
					return err
				}
				if a.output == outputTable {
					fmt.Fprintf(a.env.Stdout, "deleted project %s\n", p)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "delete projects whose runtime has a sandbox, without asking")
	return cmd
}

// confirmRemove lets the deletion of project p go ahead when its runtime
// has no sandbox, or when the person at the terminal says yes; otherwise it
// says to pass --force.
func (a *app) confirmRemove(ctx context.Context, s session, p string) error {
	proj, err := s.c.GetProject(ctx, s.org, s.ws, p)
	if err != nil {
		return err
	}
	rt, err := s.c.GetRuntime(ctx, s.org, s.ws, proj.RuntimeID)
	if err != nil {
		return err
	}
	switch rt.Status {
	case client.RuntimeRunning, client.RuntimePaused, client.RuntimeStarting:
	default:
		return nil
	}
	in, ok := ttyOf(a.env.Stdin)
	if !ok {
		return fmt.Errorf("project %s has a %s runtime: deleting it kills its sandbox and deletes its workspace; pass --force to do it", proj.Name, rt.Status)
	}
	fmt.Fprintf(a.env.Stderr, "project %s has a %s runtime; kill its sandbox and delete it with its workspace? [y/N] ", proj.Name, rt.Status)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		return fmt.Errorf("project %s kept", proj.Name)
	}
	return nil
}
