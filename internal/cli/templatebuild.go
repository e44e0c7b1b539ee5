package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var templateBuildColumns = []column[client.TemplateBuild]{
	{"ID", func(b client.TemplateBuild) string { return b.ID }},
	{"TEMPLATE", func(b client.TemplateBuild) string { return b.Template }},
	{"STATE", func(b client.TemplateBuild) string { return b.State }},
	{"IMAGE", func(b client.TemplateBuild) string { return b.Image }},
	{"SIZE", func(b client.TemplateBuild) string { return fmt.Sprint(b.SizeBytes) }},
	{"CREATED", func(b client.TemplateBuild) string { return ts(b.CreatedAt) }},
}

func (a *app) printTemplateBuild(b client.TemplateBuild) error {
	return a.printObject(b, []field{
		{"ID", b.ID}, {"TEMPLATE", b.Template}, {"STATE", b.State}, {"IMAGE", b.Image}, {"DIGEST", b.Digest},
		{"SIZE_BYTES", fmt.Sprint(b.SizeBytes)}, {"ERROR_CODE", b.ErrorCode}, {"CREATED", ts(b.CreatedAt)}, {"UPDATED", ts(b.UpdatedAt)},
	})
}

func (a *app) templateBuildCmd(sc *scope) *cobra.Command {
	var dockerfile string
	cmd := &cobra.Command{
		Use:   "build NAME [CONTEXT_DIR]",
		Short: "Build a template's image from a Dockerfile on the server's engine",
		Long: `Build an image from a Dockerfile on the server's Docker engine and make
template NAME use it (created if the workspace has none of this name).
CONTEXT_DIR (default .) is sent as the build context, less what its
.dockerignore excludes. The Dockerfile builds FROM images already on the
engine (paddock/debian:bookworm and the others): nothing is pulled. Its
RUN steps have no network. The image is the org's own: no other org may
use it. Progress is printed as the build runs; a failing step ends the
build with the step's error, leaving no image.`,
		Example: `  paddock template build web -f Dockerfile .
  paddock template build tools -f build/Dockerfile.tools build`,
		Args: rangeArgs(1, 2, "NAME [CONTEXT_DIR]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 2 {
				dir = args[1]
			}
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			b, err := a.buildTemplate(cmd.Context(), s, args[0], dir, dockerfile)
			if err != nil {
				return err
			}
			return a.printTemplateBuild(b)
		},
	}
	cmd.Flags().StringVarP(&dockerfile, "file", "f", "", "the Dockerfile (default CONTEXT_DIR/Dockerfile)")
	return cmd
}

// buildTemplate streams dir's context to the server and prints the
// build's progress as it comes (on stderr when the output is JSON).
func (a *app) buildTemplate(ctx context.Context, s session, name, dir, dockerfile string) (client.TemplateBuild, error) {
	if dockerfile == "" {
		dockerfile = dir + "/Dockerfile"
	}
	inCtx, err := contextDockerfile(dir, dockerfile)
	if err != nil {
		return client.TemplateBuild{}, err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeContext(pw, dir, dockerfile, inCtx)) }()
	defer pr.Close()
	out := a.env.Stdout
	if a.output == outputJSON {
		out = a.env.Stderr
	}
	b, _, err := s.c.BuildTemplate(ctx, s.org, s.ws, name, inCtx, pr, func(ev client.TemplateBuildEvent) {
		switch ev.Event {
		case client.BuildEventStarted:
			fmt.Fprintf(out, "build %s of template %s\n", ev.Build.ID, name)
		case client.BuildEventStep:
			fmt.Fprintf(out, "Step %d/%d : %s\n", ev.Step, ev.Steps, ev.Text)
		case client.BuildEventOutput:
			fmt.Fprintln(out, ev.Text)
		}
	})
	return b, err
}

func (a *app) templateBuildsCmd(sc *scope) *cobra.Command {
	var template string
	cmd := listCmd(a, "List the workspace's template builds", templateBuildColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.TemplateBuild], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.TemplateBuild]{}, err
			}
			return s.c.ListTemplateBuilds(ctx, s.org, s.ws, template, page)
		})
	cmd.Use, cmd.Aliases = "builds", nil
	cmd.Flags().StringVar(&template, "template", "", "only this template's builds")
	return cmd
}
