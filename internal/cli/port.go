package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var portColumns = []column[client.Port]{
	{"PORT", func(p client.Port) string { return strconv.Itoa(p.Port) }},
	{"LISTENING", func(p client.Port) string { return strconv.FormatBool(p.Listening) }},
	{"PUBLIC", func(p client.Port) string { return strconv.FormatBool(p.Public) }},
	{"COMMAND", func(p client.Port) string { return p.Command }},
	{"URL", func(p client.Port) string { return p.URL }},
}

// portArg reads a PORT argument.
func portArg(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, usagef("%q is not a port (1 to 65535)", s)
	}
	return p, nil
}

// portCmd is `paddock port ls|public|private|url`.
func (a *app) portCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("port", "Reach servers listening inside a runtime's sandbox: preview URLs, tokens, public ports")
	scopeFlags(cmd, &sc, true)
	ls := &cobra.Command{
		Use:     "ls RUNTIME",
		Aliases: []string{"list"},
		Short:   "List the ports a runtime's sandbox listens on, and those marked public, with their URLs",
		Long: `List the TCP ports something listens on in a runtime's sandbox (when it is
running) and those marked public, each with its preview URL:
P-<runtime short id>.<preview domain>. ` + runtimeArg,
		Example: "  paddock port ls agent",
		Args:    exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.target(cmd.Context(), &sc, args[0])
			if err != nil {
				return err
			}
			l, err := t.c.ListPorts(cmd.Context(), t.org, t.ws, t.rid)
			if err != nil {
				return err
			}
			return printList(a, l, portColumns)
		},
	}
	cmd.AddCommand(ls,
		a.portPublicCmd(&sc, "public", "Make a port's URLs reachable without a key or token", true),
		a.portPublicCmd(&sc, "private", "Make a port's URLs need a key or a preview token again (the default)", false),
		a.portURLCmd(&sc))
	return cmd
}

// portPublicCmd is 'paddock port public' or 'private' (use, described by
// short): mark a port of a runtime in sc public or not.
func (a *app) portPublicCmd(sc *scope, use, short string, public bool) *cobra.Command {
	return &cobra.Command{
		Use:   use + " RUNTIME PORT",
		Short: short,
		Args:  exactArgs("RUNTIME", "PORT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(args[1])
			if err != nil {
				return err
			}
			t, err := a.target(cmd.Context(), sc, args[0])
			if err != nil {
				return err
			}
			p, err := t.c.SetPortPublic(cmd.Context(), t.org, t.ws, t.rid, port, public)
			if err != nil {
				return err
			}
			return a.printObject(p, []field{{"PORT", strconv.Itoa(p.Port)}, {"PUBLIC", strconv.FormatBool(p.Public)}, {"URL", p.URL}})
		},
	}
}

// portURLCmd is 'paddock port url': a port's preview URL with a token.
func (a *app) portURLCmd(sc *scope) *cobra.Command {
	var ttl string
	url := &cobra.Command{
		Use:   "url RUNTIME PORT",
		Short: "Print a port's preview URL with a signed, expiring token, to open in a browser or share",
		Long: `Print a port's preview URL carrying a preview token (--ttl, default 1h, at
most 24h). Opening it sets a cookie, so the tab, and an iframe of it, keep
working until the token expires. A public port needs no token; its URL is in
'paddock port ls'.`,
		Example: "  paddock port url agent 3000\n  paddock port url agent 8080 --ttl 8h",
		Args:    exactArgs("RUNTIME", "PORT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(args[1])
			if err != nil {
				return err
			}
			t, err := a.target(cmd.Context(), sc, args[0])
			if err != nil {
				return err
			}
			tok, err := t.c.PreviewToken(cmd.Context(), t.org, t.ws, t.rid, port, client.PreviewTokenRequest{TTL: ttl})
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(tok)
			}
			_, err = fmt.Fprintln(a.env.Stdout, tok.URL)
			return err
		},
	}
	url.Flags().StringVar(&ttl, "ttl", "", "how long the token lasts (default 1h, at most 24h)")
	return url
}
