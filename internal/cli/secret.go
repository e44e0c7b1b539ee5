package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/pkg/client"
)

// maxSecretBytes is the server's bound on a value; more is not read.
const maxSecretBytes = 64 << 10

var secretColumns = []column[client.Secret]{
	{"NAME", func(s client.Secret) string { return s.Name }},
	{"ENV", func(s client.Secret) string { return s.Env }},
	{"SCOPE", secretScopeOf},
	{"BROKERED TO", func(s client.Secret) string { return strings.Join(s.Hosts, ", ") }},
	{"UPDATED", func(s client.Secret) string { return ts(s.UpdatedAt) }},
	{"ID", func(s client.Secret) string { return s.ID }},
}

func secretScopeOf(s client.Secret) string {
	if s.WorkspaceID == "" {
		return "org"
	}
	return "workspace"
}

// secretScope is where a secret command acts: a workspace, or with
// --org-wide the org itself.
type secretScope struct {
	scope
	orgWide bool
}

func (a *app) secretSession(sc *secretScope) (session, error) {
	if sc.orgWide {
		return a.orgSession(&sc.scope)
	}
	return a.workspaceSession(&sc.scope)
}

// secretValue says where a secret's value comes from: never the command
// line, where it would be seen in the process list and the shell history.
type secretValue struct {
	fromEnv, file string
}

func (v *secretValue) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&v.fromEnv, "from-env", "", "read the value from this environment variable of the CLI")
	cmd.Flags().StringVar(&v.file, "value-file", "", "read the value from this file (- for standard input)")
}

func (v *secretValue) given() bool { return v.fromEnv != "" || v.file != "" }

// read returns the value: from --from-env, --value-file, or standard
// input (asked for without echo on a terminal). One trailing line break
// is dropped.
func (v *secretValue) read(a *app) (string, error) {
	if v.fromEnv != "" && v.file != "" {
		return "", usagef("--from-env and --value-file both give the value; pass one")
	}
	if v.fromEnv != "" {
		val, ok := a.env.LookupEnv(v.fromEnv)
		if !ok || val == "" {
			return "", usagef("environment variable %s is not set", v.fromEnv)
		}
		return val, nil
	}
	var b []byte
	var err error
	switch {
	case v.file != "" && v.file != "-":
		b, err = os.ReadFile(v.file)
	default:
		if f, ok := a.env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			fmt.Fprint(a.env.Stderr, "value (not shown): ")
			b, err = term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(a.env.Stderr)
		} else {
			b, err = io.ReadAll(io.LimitReader(a.env.Stdin, maxSecretBytes+1))
		}
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", usagef("the secret's value is empty (give it on standard input, --from-env or --value-file)")
	}
	return s, nil
}

func (a *app) secretCmd() *cobra.Command {
	var sc secretScope
	cmd := groupCmd("secret", "Keep secrets that runtimes get as environment variables, or through the egress proxy", "secrets")
	scopeFlags(cmd, &sc.scope, true)
	cmd.PersistentFlags().BoolVar(&sc.orgWide, "org-wide", false, "the org's own secrets, which every workspace of it can use (default: the workspace's)")
	cmd.AddCommand(a.secretCreateCmd(&sc), a.secretListCmd(&sc), a.secretGetCmd(&sc), a.secretSetCmd(&sc), a.secretRemoveCmd(&sc))
	return cmd
}

func (a *app) secretCreateCmd(sc *secretScope) *cobra.Command {
	var value secretValue
	var req client.CreateSecretRequest
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a secret; its value is read from standard input",
		Long: `Create a secret of the workspace (or with --org-wide, of the org). The value
is read from standard input (asked for without echo on a terminal),
--from-env or --value-file, never from the command line; it cannot be read
back. A runtime gets it as the environment variable --env (default: NAME in
upper case) when the secret is bound to it (paddock runtime set --secret) or
passed to start (--secret).

A brokered secret never enters the sandbox: the sandbox sees a placeholder,
and the egress proxy replaces it with the value in the headers of HTTPS
requests to the --host domains. It needs the runtime's network mode proxy.`,
		Example: `  printf %s "$OPENAI_API_KEY" | paddock secret create openai --env OPENAI_API_KEY
  paddock secret create github --from-env GITHUB_TOKEN --org-wide
  paddock secret create anthropic --env ANTHROPIC_API_KEY --brokered --host api.anthropic.com --from-env ANTHROPIC_API_KEY`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.secretSession(sc)
			if err != nil {
				return err
			}
			if req.Value, err = value.read(a); err != nil {
				return err
			}
			req.Name = args[0]
			ws := s.ws
			if sc.orgWide {
				ws = ""
			}
			out, err := s.c.CreateSecret(cmd.Context(), s.org, ws, req)
			if err != nil {
				return err
			}
			return a.printSecret(out)
		},
	}
	value.flags(cmd)
	cmd.Flags().StringVar(&req.Env, "env", "", "the environment variable to inject it as (default: NAME in upper case, - and . as _)")
	cmd.Flags().BoolVar(&req.Brokered, "brokered", false, "never put the value in the sandbox: the egress proxy adds it to requests to --host")
	cmd.Flags().StringSliceVar(&req.Hosts, "host", nil, "a domain a brokered secret may be sent to (api.example.com, *.example.com; repeatable)")
	return cmd
}

func (a *app) secretListCmd(sc *secretScope) *cobra.Command {
	return listCmd(a, "List secrets: names and metadata, never values", secretColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Secret], error) {
			s, err := a.secretSession(sc)
			if err != nil {
				return client.List[client.Secret]{}, err
			}
			if sc.orgWide {
				return s.c.ListSecrets(ctx, s.org, "", page)
			}
			return s.c.ListSecrets(ctx, s.org, s.ws, page)
		})
}

func (a *app) secretGetCmd(sc *secretScope) *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show a secret's metadata",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.secretSession(sc)
			if err != nil {
				return err
			}
			out, err := s.c.GetSecret(cmd.Context(), s.org, secretWS(sc, s), args[0])
			if err != nil {
				return err
			}
			return a.printSecret(out)
		},
	}
}

func (a *app) secretSetCmd(sc *secretScope) *cobra.Command {
	var value secretValue
	var env string
	var brokered bool
	var hosts []string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Replace a secret's value, variable, brokering or hosts",
		Long: `Replace a secret's value (from --from-env or --value-file; - reads standard
input), its variable, whether it is brokered, or its hosts. What is not
given stays. Sandboxes get the change at their next start.`,
		Example: `  paddock secret set openai --value-file -
  paddock secret set anthropic --host api.anthropic.com --host *.anthropic.com`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.secretSession(sc)
			if err != nil {
				return err
			}
			var req client.ReplaceSecretRequest
			if value.given() {
				v, err := value.read(a)
				if err != nil {
					return err
				}
				req.Value = &v
			}
			req.Env = env
			if cmd.Flags().Changed("brokered") {
				req.Brokered = &brokered
			}
			if cmd.Flags().Changed("host") {
				req.Hosts = &hosts
			}
			if req.Value == nil && req.Env == "" && req.Brokered == nil && req.Hosts == nil {
				return usagef("nothing to change: give --value-file, --from-env, --env, --brokered or --host")
			}
			out, err := s.c.ReplaceSecret(cmd.Context(), s.org, secretWS(sc, s), args[0], req)
			if err != nil {
				return err
			}
			return a.printSecret(out)
		},
	}
	value.flags(cmd)
	cmd.Flags().StringVar(&env, "env", "", "the environment variable to inject it as")
	cmd.Flags().BoolVar(&brokered, "brokered", false, "broker it through the egress proxy (--brokered=false to inject it again)")
	cmd.Flags().StringSliceVar(&hosts, "host", nil, "the domains a brokered secret may be sent to (replaces the list; repeatable)")
	return cmd
}

func (a *app) secretRemoveCmd(sc *secretScope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"delete"},
		Short:   "Delete a secret (sandboxes started with it keep it until they stop)",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.secretSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.DeleteSecret(cmd.Context(), s.org, secretWS(sc, s), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "deleted secret %s\n", args[0])
			return nil
		},
	}
}

func secretWS(sc *secretScope, s session) string {
	if sc.orgWide {
		return ""
	}
	return s.ws
}

func (a *app) printSecret(s client.Secret) error {
	return a.printObject(s, []field{
		{"ID", s.ID},
		{"NAME", s.Name},
		{"ENV", s.Env},
		{"SCOPE", secretScopeOf(s)},
		{"BROKERED TO", strings.Join(s.Hosts, ", ")},
		{"VERSION", fmt.Sprint(s.Version)},
		{"UPDATED", ts(s.UpdatedAt)},
	})
}
