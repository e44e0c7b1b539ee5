package cli

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var bindingColumns = []column[client.CapabilityBinding]{
	{"NAME", func(b client.CapabilityBinding) string { return b.Name }},
	{"VERSION", func(b client.CapabilityBinding) string { return b.Version }},
	{"SOURCE", func(b client.CapabilityBinding) string { return b.Source }},
	{"ENABLED", func(b client.CapabilityBinding) string { return strconv.FormatBool(b.Enabled) }},
	{"STATUS", func(b client.CapabilityBinding) string { return bindingStatus(b.Status) }},
}

// bindingStatus sums up what applying a binding did, in a few words:
// "applied", "pending", "check failed: git", "worker exited: indexer
// (exit 3)", "failed: <why>".
func bindingStatus(st *client.BindingStatus) string {
	if st == nil || st.State == "" {
		return client.BindingPending
	}
	var setup, checks, workers []string
	for _, s := range st.Setup {
		if !s.OK {
			setup = append(setup, s.Name)
		}
	}
	for _, c := range st.Checks {
		if !c.OK {
			checks = append(checks, c.Name)
		}
	}
	for _, w := range st.Workers {
		if w.State != client.WorkerExited {
			continue
		}
		if w.ExitCode != nil {
			workers = append(workers, fmt.Sprintf("%s (exit %d)", w.Name, *w.ExitCode))
		} else {
			workers = append(workers, w.Name)
		}
	}
	var problems []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"setup failed", setup}, {"check failed", checks}, {"worker exited", workers}} {
		if len(p.names) > 0 {
			problems = append(problems, p.what+": "+strings.Join(p.names, ", "))
		}
	}
	switch {
	case len(problems) > 0:
		return strings.Join(problems, "; ")
	case st.State == client.BindingFailed && st.Error != "":
		return "failed: " + st.Error
	}
	return st.State
}

// flagsOf renders a binding's flags as "a=true b=false", sorted.
func flagsOf(flags map[string]bool) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		out = append(out, k+"="+strconv.FormatBool(flags[k]))
	}
	return strings.Join(out, " ")
}

func (a *app) printBinding(b client.CapabilityBinding) error {
	var sandbox, applied string
	if b.Status != nil {
		sandbox, applied = b.Status.SandboxID, tsp(b.Status.AppliedAt)
	}
	return a.printObject(b, []field{
		{"ID", b.ID},
		{"NAME", b.Name},
		{"VERSION", b.Version},
		{"SOURCE", b.Source},
		{"ENABLED", strconv.FormatBool(b.Enabled)},
		{"FLAGS", flagsOf(b.Config.Flags)},
		{"STATUS", bindingStatus(b.Status)},
		{"SANDBOX", sandbox},
		{"APPLIED", applied},
		{"RUNTIME", b.RuntimeID},
		{"CREATED", ts(b.CreatedAt)},
		{"UPDATED", ts(b.UpdatedAt)},
	})
}

func (a *app) capabilityCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("capability", "Install, enable, configure and remove the capabilities of a runtime", "cap")
	cmd.Long = `Capabilities are versioned bundles of agents, skills, tools, MCP servers,
workers, and setup and check scripts, from paddock's catalog ('paddock catalog
ls') or the org's inventory ('paddock inventory ls'). Installed on a runtime
they are bindings: they stay with the runtime through pause, reset and every
new sandbox, into which they are materialized at start.`
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(
		a.capabilityListCmd(&sc),
		a.capabilityInstallCmd(&sc),
		a.capabilityEnableCmd(&sc, true),
		a.capabilityEnableCmd(&sc, false),
		a.capabilityConfigCmd(&sc),
		a.capabilityRemoveCmd(&sc),
		a.capabilityResolvedCmd(&sc),
	)
	return cmd
}

// bindingArg is the BINDING argument's help.
const bindingArg = "BINDING is a binding id or the name of the capability."

func (a *app) capabilityListCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "ls RUNTIME",
		Aliases: []string{"list"},
		Short:   "List the capabilities installed on a runtime",
		Long: `List the capabilities installed on a runtime, in install order, with what
happened when each was last applied to a sandbox: applied, pending (not yet
applied to the current sandbox), the setup scripts and checks that failed and
the workers that exited; -o json has each step's output. ` + runtimeArg,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			bs, err := t.c.ListBindings(ctx, t.org, t.ws, t.rid)
			if err != nil {
				return err
			}
			return printList(a, client.List[client.CapabilityBinding]{Items: bs}, bindingColumns)
		},
	}
}

// flagValues reads --flag NAME=true|false values.
func flagValues(values []string) (map[string]bool, error) {
	flags := map[string]bool{}
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(v)
		if !ok || k == "" || err != nil {
			return nil, usagef("--flag %q: want NAME=true or NAME=false", kv)
		}
		flags[k] = b
	}
	return flags, nil
}

// nameVersion splits NAME[@VERSION]; the version is required when
// needVersion.
func nameVersion(arg string, needVersion bool) (name, version string, err error) {
	name, version, at := strings.Cut(arg, "@")
	if name == "" || (at && version == "") || (needVersion && !at) {
		if needVersion {
			return "", "", usagef("%q: want NAME@VERSION", arg)
		}
		return "", "", usagef("%q: want NAME or NAME@VERSION", arg)
	}
	return name, version, nil
}

func (a *app) capabilityInstallCmd(sc *scope) *cobra.Command {
	var (
		source   string
		disabled bool
		flags    []string
	)
	cmd := &cobra.Command{
		Use:   "install RUNTIME NAME[@VERSION]",
		Short: "Install a capability on a runtime",
		Long: `Install a capability on a runtime, pinned to VERSION or, without one, to the
newest version there is now. Without --source the org's inventory is looked in
first, then the catalog. A running sandbox gets it at once; otherwise the next
sandbox does. --flag sets one of the capability's flags, which turn its MCP
servers and workers on and off. ` + runtimeArg,
		Example: `  paddock capability install agent repo-tools
  paddock capability install agent memory@1.0.0 --source catalog --flag memory=false`,
		Args: exactArgs("RUNTIME", "NAME[@VERSION]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := nameVersion(args[1], false)
			if err != nil {
				return err
			}
			if source != "" && source != client.SourceCatalog && source != client.SourceInventory {
				return usagef("--source must be %q or %q, not %q", client.SourceCatalog, client.SourceInventory, source)
			}
			req := client.InstallCapabilityRequest{Name: name, Version: version, Source: source}
			if disabled {
				req.Enabled = new(false)
			}
			if len(flags) > 0 {
				f, err := flagValues(flags)
				if err != nil {
					return err
				}
				req.Config = &client.BindingConfig{Flags: f}
			}
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			b, err := t.c.InstallCapability(ctx, t.org, t.ws, t.rid, req)
			if err != nil {
				return err
			}
			return a.printBinding(b)
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "where the capability comes from: catalog or inventory (default: the inventory, then the catalog)")
	f.BoolVar(&disabled, "disabled", false, "install it disabled")
	f.StringArrayVar(&flags, "flag", nil, "set a flag of the capability, NAME=true or NAME=false (repeatable)")
	return cmd
}

// binding resolves a BINDING argument, an id or a capability name, to the
// runtime's binding.
func (a *app) binding(ctx context.Context, t target, arg string) (client.CapabilityBinding, error) {
	bs, err := t.c.ListBindings(ctx, t.org, t.ws, t.rid)
	if err != nil {
		return client.CapabilityBinding{}, err
	}
	for _, b := range bs {
		if b.ID == arg || b.Name == arg {
			return b, nil
		}
	}
	return client.CapabilityBinding{}, fmt.Errorf("no capability %q is installed on the runtime; see 'paddock capability ls'", arg)
}

// bindingCall resolves RUNTIME and BINDING, runs act on the binding and
// prints the binding it returns.
func (a *app) bindingCall(cmd *cobra.Command, sc *scope, args []string, act func(ctx context.Context, t target, b client.CapabilityBinding) (client.CapabilityBinding, error)) error {
	ctx := cmd.Context()
	t, err := a.target(ctx, sc, args[0])
	if err != nil {
		return err
	}
	b, err := a.binding(ctx, t, args[1])
	if err != nil {
		return err
	}
	b, err = act(ctx, t, b)
	if err != nil {
		return err
	}
	return a.printBinding(b)
}

func (a *app) capabilityEnableCmd(sc *scope, enable bool) *cobra.Command {
	verb, short := "enable", "Enable a capability installed on a runtime"
	if !enable {
		verb, short = "disable", "Disable a capability installed on a runtime, keeping it installed"
	}
	return &cobra.Command{
		Use:   verb + " RUNTIME BINDING",
		Short: short,
		Long:  short + ". " + runtimeArg + " " + bindingArg,
		Args:  exactArgs("RUNTIME", "BINDING"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.bindingCall(cmd, sc, args, func(ctx context.Context, t target, b client.CapabilityBinding) (client.CapabilityBinding, error) {
				return t.c.UpdateBinding(ctx, t.org, t.ws, t.rid, b.ID, client.UpdateBindingRequest{Enabled: &enable})
			})
		},
	}
}

func (a *app) capabilityConfigCmd(sc *scope) *cobra.Command {
	var (
		flags   []string
		reset   bool
		version string
	)
	cmd := &cobra.Command{
		Use:   "config RUNTIME BINDING",
		Short: "Set the flags of a capability installed on a runtime, or move its version",
		Long: `Set flags of a capability installed on a runtime: each --flag changes one
and the others stay as they are; --reset first returns every flag to the
capability's default. --version pins another version. ` + runtimeArg + " " + bindingArg,
		Example: `  paddock capability config agent memory --flag memory=false
  paddock capability config agent memory --reset
  paddock capability config agent my-tools --version 1.3.0`,
		Args: exactArgs("RUNTIME", "BINDING"),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := flagValues(flags)
			if err != nil {
				return err
			}
			if len(set) == 0 && !reset && version == "" {
				return usagef("nothing to change: give --flag, --reset or --version")
			}
			return a.bindingCall(cmd, sc, args, func(ctx context.Context, t target, b client.CapabilityBinding) (client.CapabilityBinding, error) {
				req := client.UpdateBindingRequest{Version: version}
				if len(set) > 0 || reset {
					merged := map[string]bool{}
					if !reset {
						maps.Copy(merged, b.Config.Flags)
					}
					maps.Copy(merged, set)
					req.Config = &client.BindingConfig{Flags: merged}
				}
				return t.c.UpdateBinding(ctx, t.org, t.ws, t.rid, b.ID, req)
			})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&flags, "flag", nil, "set a flag, NAME=true or NAME=false (repeatable)")
	f.BoolVar(&reset, "reset", false, "return every flag to the capability's default first")
	f.StringVar(&version, "version", "", "pin this version of the capability")
	return cmd
}

func (a *app) capabilityRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm RUNTIME BINDING",
		Aliases: []string{"uninstall"},
		Short:   "Uninstall a capability from a runtime",
		Long:    "Uninstall a capability from a runtime. " + runtimeArg + " " + bindingArg,
		Args:    exactArgs("RUNTIME", "BINDING"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			b, err := a.binding(ctx, t, args[1])
			if err != nil {
				return err
			}
			if err := t.c.UninstallCapability(ctx, t.org, t.ws, t.rid, b.ID); err != nil {
				return err
			}
			if a.output == outputTable {
				fmt.Fprintf(a.env.Stdout, "uninstalled capability %s@%s\n", b.Name, b.Version)
			}
			return nil
		},
	}
}

// resolvedRow is one thing a resolved set holds.
type resolvedRow struct {
	kind, name, capability, detail string
}

var resolvedColumns = []column[resolvedRow]{
	{"KIND", func(r resolvedRow) string { return r.kind }},
	{"NAME", func(r resolvedRow) string { return r.name }},
	{"CAPABILITY", func(r resolvedRow) string { return r.capability }},
	{"DETAIL", func(r resolvedRow) string { return r.detail }},
}

// resolvedRows flattens a resolved set, kind by kind.
func resolvedRows(rc client.ResolvedCapabilities) []resolvedRow {
	var rows []resolvedRow
	items := func(kind string, list []client.ResolvedItem) {
		for _, it := range list {
			rows = append(rows, resolvedRow{kind, it.Name, it.Capability, cmp.Or(oneLine(it.Description, 60), it.Path)})
		}
	}
	items("agent", rc.Agents)
	items("skill", rc.Skills)
	items("tool", rc.Tools)
	for _, m := range rc.MCPServers {
		detail := m.Type + " " + m.URL
		if m.Type != "http" {
			detail = strings.Join(append([]string{m.Type, m.Command}, m.Args...), " ")
		}
		rows = append(rows, resolvedRow{"mcp_server", m.Name, m.Capability, strings.TrimSpace(detail)})
	}
	items("worker", rc.Workers)
	items("setup", rc.Setup)
	items("check", rc.Checks)
	return rows
}

func (a *app) capabilityResolvedCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "resolved RUNTIME",
		Short: "Show the merged set of a runtime's enabled capabilities",
		Long: `Show the merged set of a runtime's enabled capabilities: their agents,
skills, tools, MCP servers, workers, setup scripts and checks, each with the
capability it comes from. A name two capabilities both ship is a conflict:
the one installed first keeps it, and each conflict is reported on standard
error. ` + runtimeArg,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			rc, err := t.c.ResolvedCapabilities(ctx, t.org, t.ws, t.rid)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				err = a.printJSON(rc)
			} else {
				if rc.Path != "" {
					fmt.Fprintf(a.env.Stdout, "materialized under %s\n\n", rc.Path)
				}
				err = printList(a, client.List[resolvedRow]{Items: resolvedRows(rc)}, resolvedColumns)
			}
			for _, c := range rc.Conflicts {
				fmt.Fprintf(a.env.Stderr, "CONFLICT: %s %q is shipped by %s; only the first installed is used\n",
					strings.ReplaceAll(c.Kind, "_", " "), c.Name, strings.Join(c.Capabilities, " and "))
			}
			return err
		},
	}
}
