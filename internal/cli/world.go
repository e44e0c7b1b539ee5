package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// Worlds: `paddock world create|ls|show|pause|resume|rm|exec`.

var worldColumns = []column[client.World]{
	{"ID", func(w client.World) string { return w.ID }},
	{"NAME", func(w client.World) string { return w.Name }},
	{"STATUS", func(w client.World) string { return w.Status }},
	{"MEMBERS", func(w client.World) string { return strconv.Itoa(len(w.Members)) }},
	{"CREDITS", func(w client.World) string { return strconv.FormatFloat(w.EstimatedTotalCredits, 'f', 6, 64) }},
	{"CREATED", func(w client.World) string { return ts(w.CreatedAt) }},
}

func (a *app) worldCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("world", "Start, pause, resume and remove worlds: sandboxes on one private network")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.worldCreateCmd(&sc), a.worldListCmd(&sc),
		a.worldActionCmd(&sc, "show", "Show a world: its members, their sandboxes and its cost", (*client.Client).GetWorld),
		a.worldActionCmd(&sc, "pause", "Pause every member of a world", (*client.Client).PauseWorld),
		a.worldActionCmd(&sc, "resume", "Resume every member of a world", (*client.Client).ResumeWorld),
		a.worldActionCmd(&sc, "rm", "Tear a world down: every member's sandbox and its network", (*client.Client).DeleteWorld),
		a.worldExecCmd(&sc))
	return cmd
}

func (a *app) worldCreateCmd(sc *scope) *cobra.Command {
	var members []string
	var file string
	cmd := &cobra.Command{
		Use:   "create NAME --member SPEC... | create NAME -f FILE",
		Short: "Start a world: a sandbox for each member, on one private network",
		Long: `Start a world: a sandbox of kind world for each member, all on one private
network where each reaches the others by member name and nothing else (no
egress, not the host, not another world). paddock waits until every member
runs; a member that cannot start takes the others down with it.
A --member SPEC is comma-separated key=value pairs: name (required),
template, image, cpu (millicores), memory (MB), env (NAME=VALUE, repeatable),
and last, cmd: a shell command started in the background once every member
runs (everything after cmd= is the command). -f FILE reads the members as
JSON instead: {"members": [{"name": …, "template": …, "runtime": {…},
"command": […]}]}.`,
		Example: `  paddock world create arena --member name=server,template=game,cmd='./serve --port 8080' --member name=player,template=agent
  paddock world create lab -f world.json`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := worldRequest(args[0], members, file)
			if err != nil {
				return err
			}
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			w, err := s.c.CreateWorld(cmd.Context(), s.org, s.ws, req)
			if err != nil {
				return err
			}
			return a.printWorld(w)
		},
	}
	cmd.Flags().StringArrayVar(&members, "member", nil, "a member: name=N[,template=T][,image=I][,cpu=M][,memory=MB][,env=K=V][,cmd=COMMAND] (repeatable)")
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the members from this JSON file")
	return cmd
}

// worldRequest is the create request of the world name, from --member
// specs or a JSON file.
func worldRequest(name string, specs []string, file string) (client.CreateWorldRequest, error) {
	req := client.CreateWorldRequest{Name: name}
	switch {
	case file != "" && len(specs) > 0:
		return req, usagef("give --member or --file, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return req, err
		}
		var doc struct {
			Members []client.WorldMemberRequest `json:"members"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return req, usagef("%s: %v", file, err)
		}
		req.Members = doc.Members
	default:
		for _, spec := range specs {
			m, err := parseMember(spec)
			if err != nil {
				return req, err
			}
			req.Members = append(req.Members, m)
		}
	}
	if len(req.Members) == 0 {
		return req, usagef("a world needs at least one --member")
	}
	return req, nil
}

// parseMember reads one --member SPEC.
func parseMember(spec string) (client.WorldMemberRequest, error) {
	var m client.WorldMemberRequest
	rc := &client.RuntimeConfig{}
	rest := spec
	for rest != "" {
		var kv string
		if strings.HasPrefix(rest, "cmd=") {
			kv, rest = rest, ""
		} else {
			kv, rest, _ = strings.Cut(rest, ",")
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return m, usagef("--member %q: %q is not key=value", spec, kv)
		}
		var err error
		switch k {
		case "name":
			m.Name = v
		case "template":
			m.Template = v
		case "image":
			rc.Image = v
		case "cpu":
			rc.CPUMillis, err = strconv.ParseInt(v, 10, 64)
		case "memory":
			rc.MemoryMB, err = strconv.ParseInt(v, 10, 64)
		case "env":
			ek, ev, _ := strings.Cut(v, "=")
			if m.Env == nil {
				m.Env = map[string]string{}
			}
			m.Env[ek] = ev
		case "cmd":
			m.Command = []string{"sh", "-c", v}
		default:
			return m, usagef("--member %q: unknown key %q (name, template, image, cpu, memory, env, cmd)", spec, k)
		}
		if err != nil {
			return m, usagef("--member %q: %s: %v", spec, k, err)
		}
	}
	if m.Name == "" {
		return m, usagef("--member %q needs a name", spec)
	}
	if rc.Image != "" || rc.CPUMillis != 0 || rc.MemoryMB != 0 {
		m.Runtime = rc
	}
	return m, nil
}

func (a *app) worldListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the workspace's worlds, oldest first", worldColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.World], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.World]{}, err
			}
			return s.c.ListWorlds(ctx, s.org, s.ws, page)
		})
}

// worldActionCmd is `world VERB WORLD`: it prints the world act returns.
func (a *app) worldActionCmd(sc *scope, verb, short string, act func(c *client.Client, ctx context.Context, org, ws, id string) (client.World, error)) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " WORLD",
		Short: short,
		Args:  exactArgs("WORLD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			id, err := worldID(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			w, err := act(s.c, cmd.Context(), s.org, s.ws, id)
			if err != nil {
				return err
			}
			return a.printWorld(w)
		},
	}
}

func (a *app) worldExecCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "exec WORLD MEMBER -- COMMAND [ARG...]",
		Short: "Run a command in a member of a running world",
		Long: `Run a command in a member of a running world, through its agent, and print
its output once it exits; paddock exits with the command's exit code.`,
		Example: `  paddock world exec arena player -- sh -c 'nc -w 3 server 8080 < /dev/null'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 3 {
				return usagef("expected WORLD, MEMBER and a COMMAND")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			id, err := worldID(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			res, err := s.c.ExecWorldMember(cmd.Context(), s.org, s.ws, id, args[1], client.ExecRequest{Argv: args[2:]})
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				if err := a.printJSON(res); err != nil {
					return err
				}
			} else {
				_, _ = a.env.Stdout.Write(res.Stdout)
				_, _ = a.env.Stderr.Write(res.Stderr)
			}
			if res.Exit == nil {
				return nil
			}
			return a.exitWith(*res.Exit)
		},
	}
}

// worldID resolves ref, a world's id or the name of a world of the
// workspace (the newest that is not gone, else the newest).
func worldID(ctx context.Context, s session, ref string) (string, error) {
	if isUUID(ref) {
		return ref, nil
	}
	var found, live string
	for cursor := ""; ; {
		page, err := s.c.ListWorlds(ctx, s.org, s.ws, client.ListOptions{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, w := range page.Items {
			if w.Name != ref {
				continue
			}
			found = w.ID
			if w.Status != client.WorldDeleted && w.Status != client.WorldFailed {
				live = w.ID
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if live != "" {
		return live, nil
	}
	if found == "" {
		return "", fmt.Errorf("no world %q in this workspace", ref)
	}
	return found, nil
}

func (a *app) printWorld(w client.World) error {
	if err := a.printObject(w, []field{
		{"ID", w.ID}, {"NAME", w.Name}, {"STATUS", w.Status}, {"PROVIDER", w.Provider}, {"ERROR", w.Error},
		{"BILLED_CREDITS", strconv.FormatFloat(w.BilledCredits, 'f', 6, 64)},
		{"ESTIMATED_TOTAL_CREDITS", strconv.FormatFloat(w.EstimatedTotalCredits, 'f', 6, 64)},
		{"CREATED", ts(w.CreatedAt)},
	}); err != nil || a.output == outputJSON {
		return err
	}
	fmt.Fprintln(a.env.Stdout, "# members")
	for _, m := range w.Members {
		state := ""
		if m.Sandbox != nil {
			state = m.Sandbox.State
		}
		fmt.Fprintf(a.env.Stdout, "%s\t%s\t%s\t%s\n", m.Name, m.SandboxID, state, m.Image)
	}
	return nil
}
