package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/pkg/client"
)

// completeTimeout bounds a completion's calls to the server: a shell waits
// on them.
const completeTimeout = 5 * time.Second

// fixedValues are the values of flags that take one of a few words.
var fixedValues = map[string][]string{
	"output":  {outputTable, outputJSON},
	"network": {"none", "proxy", "open"},
	"rootfs":  {"readonly", "writable"},
	"role":    {client.RoleViewer, client.RoleMember, client.RoleAdmin, client.RoleOwner},
	"state":   {client.SandboxStarting, client.SandboxRunning, client.SandboxPaused, client.SandboxKilled},
	"by":      {"sandbox", "runtime", "project", "workspace", "org"},
}

// addCompletions gives every command under root its dynamic completions:
// a RUNTIME or PROJECT argument completes to the workspace's project
// names, --org and --ws to the orgs and workspaces the credential sees,
// and flags of a few fixed words to those words.
func (a *app) addCompletions(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.ValidArgsFunction == nil && len(cmd.ValidArgs) == 0 && namesProject(cmd.Use) {
			cmd.ValidArgsFunction = a.completeProjects
		}
		register := func(f *pflag.Flag) {
			switch words, fixed := fixedValues[f.Name]; {
			case fixed:
				_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
			case f.Name == "org":
				_ = cmd.RegisterFlagCompletionFunc(f.Name, a.completeOrgs)
			case f.Name == "ws":
				_ = cmd.RegisterFlagCompletionFunc(f.Name, a.completeWorkspaces)
			}
		}
		cmd.LocalNonPersistentFlags().VisitAll(register)
		cmd.PersistentFlags().VisitAll(register)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// namesProject reports whether a command's first argument, by its usage
// line, is a runtime or a project.
func namesProject(use string) bool {
	for _, w := range strings.Fields(use)[1:] {
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") && w != "[RUNTIME...]" {
			continue // [flags]
		}
		w = strings.Trim(w, "[].")
		return w == "RUNTIME" || w == "PROJECT"
	}
	return false
}

// completionScope is the org and workspace a command line being completed
// names with --org and --ws, if it does.
func completionScope(cmd *cobra.Command) *scope {
	var sc scope
	if f := cmd.Flag("org"); f != nil {
		sc.org = f.Value.String()
	}
	if f := cmd.Flag("ws"); f != nil {
		sc.ws = f.Value.String()
	}
	return &sc
}

// completeProjects completes the first argument to the names of the
// workspace's projects, a runtime's name everywhere.
func (a *app) completeProjects(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 && !strings.HasSuffix(cmd.Use, "...") && !strings.HasSuffix(cmd.Use, "...]") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	s, err := a.workspaceSession(completionScope(cmd))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeNames(cmd.Context(), func(ctx context.Context, page client.ListOptions) (client.List[client.Project], error) {
		return s.c.ListProjects(ctx, s.org, s.ws, page)
	}, func(p client.Project) string { return p.Name })
}

// completeOrgs completes --org to the orgs the credential sees.
func (a *app) completeOrgs(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeNames(cmd.Context(), c.ListOrgs, func(o client.Org) string { return o.Name })
}

// completeWorkspaces completes --ws to the workspaces of the org.
func (a *app) completeWorkspaces(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	s, err := a.orgSession(completionScope(cmd))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeNames(cmd.Context(), func(ctx context.Context, page client.ListOptions) (client.List[client.Workspace], error) {
		return s.c.ListWorkspaces(ctx, s.org, page)
	}, func(w client.Workspace) string { return w.Name })
}

// completeNames lists the first page of names list gives (a completion
// offers what fits on a screen), or nothing if the server does not answer
// in time.
func completeNames[T any](ctx context.Context, list func(context.Context, client.ListOptions) (client.List[T], error), name func(T) string) ([]string, cobra.ShellCompDirective) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	l, err := list(ctx, client.ListOptions{Limit: 100})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		names = append(names, name(it))
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
