package cli

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// amount formats credits with the ledger's six decimal places.
func amount(v float64) string {
	return strconv.FormatFloat(v, 'f', 6, 64)
}

var entryColumns = []column[client.CreditEntry]{
	{"SEQ", func(e client.CreditEntry) string { return strconv.FormatInt(e.Seq, 10) }},
	{"TIME", func(e client.CreditEntry) string { return ts(e.CreatedAt) }},
	{"KIND", func(e client.CreditEntry) string { return e.Kind }},
	{"AMOUNT", func(e client.CreditEntry) string { return amount(e.Amount) }},
	{"HELD", func(e client.CreditEntry) string { return amount(e.HeldChange) }},
	{"BALANCE", func(e client.CreditEntry) string { return amount(e.BalanceAfter) }},
	{"SHORTFALL", func(e client.CreditEntry) string {
		if e.Shortfall == 0 {
			return ""
		}
		return amount(e.Shortfall)
	}},
	{"SANDBOX", func(e client.CreditEntry) string { return e.SandboxID }},
	{"NOTE", func(e client.CreditEntry) string { return e.Note }},
}

func (a *app) printEntry(e client.CreditEntry) error {
	return a.printObject(e, []field{
		{"ID", e.ID},
		{"SEQ", strconv.FormatInt(e.Seq, 10)},
		{"KIND", e.Kind},
		{"AMOUNT", amount(e.Amount)},
		{"HELD_CHANGE", amount(e.HeldChange)},
		{"BALANCE_AFTER", amount(e.BalanceAfter)},
		{"HELD_AFTER", amount(e.HeldAfter)},
		{"IDEMPOTENCY_KEY", e.IdempotencyKey},
		{"NOTE", e.Note},
		{"CREATED", ts(e.CreatedAt)},
	})
}

// creditsCmd is `paddock credits`: alone it shows the balance and recent
// movements; its verbs grant, set the balance and list the journal.
func (a *app) creditsCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "credits",
		Short: "Show an org's credit balance and recent movements; grant credits",
		Long: `Show an org's credit balance, the credits held for compute being started,
and its most recent movements. Compute is paid for in credits: a start
prepays its first slice, running sandboxes are charged as they run, and
when the balance runs out the org's compute is paused.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.orgSession(&sc)
			if err != nil {
				return err
			}
			acct, err := s.c.GetCredits(cmd.Context(), s.org)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(acct)
			}
			if err := a.printObject(acct, []field{
				{"BALANCE", amount(acct.Balance)},
				{"HELD", amount(acct.Held)},
				{"AVAILABLE", amount(acct.Available)},
				{"UPDATED", tsp(acct.UpdatedAt)},
			}); err != nil {
				return err
			}
			fmt.Fprintln(a.env.Stdout)
			return printList(a, client.List[client.CreditEntry]{Items: acct.Recent}, entryColumns)
		},
	}
	scopeFlags(cmd, &sc, false)
	cmd.AddCommand(a.creditsMoveCmd(&sc, "grant"), a.creditsMoveCmd(&sc, "set-balance"), a.creditsJournalCmd(&sc))
	return cmd
}

// parseAmount reads an amount of credits.
func parseAmount(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, usagef("AMOUNT %q: want a number of credits, such as 100 or 2.5", s)
	}
	return v, nil
}

// newKey makes an idempotency key for a movement given none.
func newKey() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "cli-" + hex.EncodeToString(b)
}

// creditsMoveCmd is `credits grant AMOUNT` or `credits set-balance AMOUNT`.
func (a *app) creditsMoveCmd(sc *scope, verb string) *cobra.Command {
	var key, note string
	short := "Grant an org credits (needs an installation admin key)"
	if verb == "set-balance" {
		short = "Set an org's balance, as an adjustment (needs an installation admin key)"
	}
	cmd := &cobra.Command{
		Use:   verb + " AMOUNT",
		Short: short,
		Long: short + `.

A retry with the same --idempotency-key moves credits once; without one, a
fresh key is made and printed with the entry. Granting resumes nothing:
compute paused for lack of credits stays paused until resumed.`,
		Args: exactArgs("AMOUNT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := parseAmount(args[0])
			if err != nil {
				return err
			}
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			if key == "" {
				key = newKey()
			}
			var e client.CreditEntry
			if verb == "grant" {
				e, err = s.c.GrantCredits(cmd.Context(), s.org, client.GrantCreditsRequest{Amount: v, IdempotencyKey: key, Note: note})
			} else {
				e, err = s.c.SetCreditBalance(cmd.Context(), s.org, client.SetBalanceRequest{Balance: v, IdempotencyKey: key, Note: note})
			}
			if err != nil {
				return err
			}
			return a.printEntry(e)
		},
	}
	cmd.Flags().StringVar(&key, "idempotency-key", "", "key that makes a retry move credits once (default: a fresh one)")
	cmd.Flags().StringVar(&note, "note", "", "why, for the journal")
	return cmd
}

// timeFlag is a --from or --to value: an RFC 3339 time, a date
// (YYYY-MM-DD, UTC), or a duration meaning that long ago (24h).
type timeFlag struct {
	name string
	t    time.Time
	now  func() time.Time
}

func (f *timeFlag) parse(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			f.t = t
			return nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		f.t = f.now().Add(-d)
		return nil
	}
	return usagef("--%s %q: want an RFC 3339 time, a date (2026-03-01) or how long ago (24h)", f.name, s)
}

// rangeFlags adds --from and --to.
func rangeFlags(cmd *cobra.Command, from, to *string) {
	cmd.Flags().StringVar(from, "from", "", "start of the range: RFC 3339 time, date, or how long ago (24h)")
	cmd.Flags().StringVar(to, "to", "", "end of the range, exclusive (default: now)")
}

// parseRange reads --from and --to.
func parseRange(from, to string) (time.Time, time.Time, error) {
	f, t := timeFlag{name: "from", now: time.Now}, timeFlag{name: "to", now: time.Now}
	if err := f.parse(from); err != nil {
		return time.Time{}, time.Time{}, err
	}
	if err := t.parse(to); err != nil {
		return time.Time{}, time.Time{}, err
	}
	return f.t, t.t, nil
}

func (a *app) creditsJournalCmd(sc *scope) *cobra.Command {
	var (
		f        client.JournalFilter
		page     client.ListOptions
		from, to string
	)
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "List an org's credit movements, newest first",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.From, f.To, err = parseRange(from, to); err != nil {
				return err
			}
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			f.Cursor, f.Limit = page.Cursor, page.Limit
			l, err := s.c.ListCreditJournal(cmd.Context(), s.org, f)
			if err != nil {
				return err
			}
			return printList(a, l, entryColumns)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.SandboxID, "sandbox", "", "only the movements of this sandbox id")
	fl.StringVar(&f.RuntimeID, "runtime", "", "only the movements of this runtime id")
	fl.StringVar(&f.ProjectID, "project", "", "only the movements of this project id")
	fl.StringVar(&f.Kind, "kind", "", "only this kind: grant, adjustment, hold, release, deduction or refund")
	rangeFlags(cmd, &from, &to)
	pageFlags(cmd, &page)
	return cmd
}

var usageColumns = []column[client.UsageItem]{
	{"NAME", func(u client.UsageItem) string { return cmp.Or(u.Name, u.Key) }},
	{"KEY", func(u client.UsageItem) string { return u.Key }},
	{"CHARGED", func(u client.UsageItem) string { return amount(u.Charged) }},
	{"REFUNDED", func(u client.UsageItem) string { return amount(u.Refunded) }},
	{"NET", func(u client.UsageItem) string { return amount(u.Net) }},
	{"SHORTFALL", func(u client.UsageItem) string { return amount(u.Shortfall) }},
	{"ENTRIES", func(u client.UsageItem) string { return strconv.FormatInt(u.Entries, 10) }},
}

// usageCmd is `paddock usage`: what compute cost, grouped.
func (a *app) usageCmd() *cobra.Command {
	var (
		sc       scope
		q        client.UsageQuery
		from, to string
	)
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show what an org's compute cost, per sandbox, runtime, project, workspace or org",
		Long: `Show what an org's compute cost over a time range, from the credit
journal's deductions and refunds, grouped by --by.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if q.From, q.To, err = parseRange(from, to); err != nil {
				return err
			}
			s, err := a.orgSession(&sc)
			if err != nil {
				return err
			}
			u, err := s.c.GetUsage(cmd.Context(), s.org, q)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(u)
			}
			if err := printList(a, client.List[client.UsageItem]{Items: u.Items}, usageColumns); err != nil {
				return err
			}
			tw := a.table(1)
			fmt.Fprintf(tw, "\nTOTAL:\t%s net (%s charged, %s refunded, %s unpaid)\n",
				amount(u.Total.Net), amount(u.Total.Charged), amount(u.Total.Refunded), amount(u.Total.Shortfall))
			return tw.flush()
		},
	}
	scopeFlags(cmd, &sc, false)
	cmd.Flags().StringVar(&q.GroupBy, "by", "org", "group by sandbox, runtime, project, workspace or org")
	rangeFlags(cmd, &from, &to)
	return cmd
}
