package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var sessionColumns = []column[client.Session]{
	{"ID", func(s client.Session) string { return s.ID }},
	{"KIND", func(s client.Session) string { return s.Kind }},
	{"HARNESS", func(s client.Session) string { return s.Harness }},
	{"STATUS", func(s client.Session) string { return s.Status }},
	{"TURNS", func(s client.Session) string { return strconv.Itoa(s.Turns) }},
	{"UPDATED", func(s client.Session) string { return ts(s.UpdatedAt) }},
	{"TITLE", func(s client.Session) string { return oneLine(s.Title, 60) }},
}

func (a *app) sessionCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("session", "List a runtime's agent sessions and show their transcripts")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.sessionListCmd(&sc), a.sessionShowCmd(&sc))
	return cmd
}

func (a *app) sessionListCmd(sc *scope) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls RUNTIME",
		Aliases: []string{"list"},
		Short:   "List a runtime's sessions, newest first",
		Long:    "List the sessions of prompts and tasks on a runtime, newest first. " + runtimeArg,
		Args:    exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			l, err := t.c.ListSessions(ctx, t.org, t.ws, t.rid, page)
			if err != nil {
				return err
			}
			return printList(a, l, sessionColumns)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

func (a *app) sessionShowCmd(sc *scope) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUNTIME SESSION",
		Short: "Show a session and its transcript",
		Long: `Show a session and its transcript, turn by turn: each prompt, the assistant's
text, the tools it called and what they returned, usage and errors. --json
(or -o json) prints the session and its events as JSON. ` + runtimeArg,
		Args: exactArgs("RUNTIME", "SESSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			tr, err := t.c.GetSession(ctx, t.org, t.ws, t.rid, args[1])
			if err != nil {
				return err
			}
			if asJSON || a.output == outputJSON {
				if tr.Events == nil {
					tr.Events = []client.SessionEvent{}
				}
				return a.printJSON(tr)
			}
			s := tr.Session
			if err := a.printObject(s, []field{
				{"ID", s.ID},
				{"KIND", s.Kind},
				{"HARNESS", s.Harness},
				{"HARNESS_SESSION", s.HarnessSessionID},
				{"STATUS", s.Status},
				{"TITLE", s.Title},
				{"TURNS", strconv.Itoa(s.Turns)},
				{"CREATED", ts(s.CreatedAt)},
				{"UPDATED", ts(s.UpdatedAt)},
			}); err != nil {
				return err
			}
			p := &eventPrinter{out: a.env.Stdout, errOut: a.env.Stdout}
			turn := 0
			for _, ev := range tr.Events {
				if ev.Turn != turn {
					turn = ev.Turn
					p.line("\n── turn %d · %s", turn, ts(ev.Time))
				}
				p.print(ev)
			}
			p.endLine()
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session and its events as JSON")
	return cmd
}
