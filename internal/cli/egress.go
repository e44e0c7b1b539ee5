package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var egressColumns = []column[client.EgressDecision]{
	{"TIME", func(d client.EgressDecision) string { return ts(d.At) }},
	{"VERDICT", func(d client.EgressDecision) string { return verdict(d) }},
	{"METHOD", func(d client.EgressDecision) string { return d.Method }},
	{"HOST", func(d client.EgressDecision) string { return d.Host }},
	{"PORT", func(d client.EgressDecision) string { return strconv.Itoa(d.Port) }},
	{"UP", func(d client.EgressDecision) string { return strconv.FormatInt(d.BytesUp, 10) }},
	{"DOWN", func(d client.EgressDecision) string { return strconv.FormatInt(d.BytesDown, 10) }},
	{"MS", func(d client.EgressDecision) string { return fmt.Sprintf("%.1f", d.DurationMS) }},
	{"REASON", func(d client.EgressDecision) string { return d.Reason }},
}

func verdict(d client.EgressDecision) string {
	switch {
	case !d.Allowed:
		return "denied"
	case d.Brokered:
		return "brokered"
	}
	return "allowed"
}

func (a *app) egressCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("egress", "Show what a runtime's sandboxes sent out through the egress proxy")
	scopeFlags(cmd, &sc, true)
	var page client.ListOptions
	ls := &cobra.Command{
		Use:     "ls RUNTIME",
		Aliases: []string{"list"},
		Short:   "List the egress proxy's decisions about a runtime's traffic, newest first",
		Long: `List the egress proxy's decisions about a runtime's traffic (proxy mode),
newest first: every request and tunnel, allowed or denied and why, with the
bytes it moved each way. ` + runtimeArg,
		Example: "  paddock egress ls agent",
		Args:    exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.target(cmd.Context(), &sc, args[0])
			if err != nil {
				return err
			}
			l, err := t.c.ListEgress(cmd.Context(), t.org, t.ws, t.rid, page)
			if err != nil {
				return err
			}
			return printList(a, l, egressColumns)
		},
	}
	pageFlags(ls, &page)
	cmd.AddCommand(ls)
	return cmd
}
