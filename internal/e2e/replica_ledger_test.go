package e2e

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// checkLedger checks the PostgreSQL database at dsn against what the load
// l had acknowledged, in one snapshot (a repeatable-read transaction: the
// settler may still charge):
//
//   - every acknowledged create's runtime and every sandbox an
//     acknowledged start or pause named has its row, none is starting,
//     and no runtime has two live sandboxes;
//   - each idempotency key is in an org's journal at most once, and each
//     acknowledged grant or adjustment is there, of its amount (an
//     adjustment: the balance after it);
//   - each org's balance and held credits are the sums of its journal's
//     movements, and every entry's balance and held after it are those of
//     the entry before it plus its own movement (no lost update);
//   - each sandbox's bill is what its deductions took less what its
//     refunds gave back, and no instant of a sandbox's life is charged
//     twice: over its deductions' periods less its refunds', no instant
//     is covered more than once.
func checkLedger(t testing.TB, dsn string, l *chaosLoad) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	l.mu.Lock()
	defer l.mu.Unlock()
	checkAckedRows(t, tx, l)
	checkJournal(t, tx, l.postings)
	checkBills(t, tx)
}

// queryStrings returns the first column of sql's rows.
func queryStrings(t testing.TB, tx pgx.Tx, sql string, args ...any) map[string]bool {
	t.Helper()
	rows, err := tx.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out := map[string]bool{}
	var s string
	if _, err := pgx.ForEachRow(rows, []any{&s}, func() error { out[s] = true; return nil }); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// checkAckedRows checks that what the fleet acknowledged creating is in
// the database.
func checkAckedRows(t testing.TB, tx pgx.Tx, l *chaosLoad) {
	t.Helper()
	runtimes := queryStrings(t, tx, "SELECT id FROM runtimes")
	for _, id := range l.created {
		if !runtimes[id] {
			t.Errorf("the runtime of an acknowledged create, %s, has no row", id)
		}
	}
	sandboxes := queryStrings(t, tx, "SELECT id FROM sandboxes")
	for id, op := range l.sandboxes {
		if !sandboxes[id] {
			t.Errorf("sandbox %s, named by an acknowledged %s, has no row", id, op)
		}
	}
	if n := len(queryStrings(t, tx, "SELECT id FROM runtimes WHERE status = 'starting'")); n > 0 {
		t.Errorf("%d runtimes still starting", n)
	}
	if n := len(queryStrings(t, tx, "SELECT id FROM sandboxes WHERE state = 'starting'")); n > 0 {
		t.Errorf("%d sandboxes still starting", n)
	}
	// Two starts of one runtime on two replicas give one sandbox.
	for id := range queryStrings(t, tx, `SELECT runtime_id FROM sandboxes WHERE state IN ('running', 'paused')
		AND runtime_id <> '' GROUP BY runtime_id HAVING count(*) > 1`) {
		t.Errorf("runtime %s has more than one live sandbox", id)
	}
}

// entry is a row of credit_journal.
type entry struct {
	seq                       int64
	org, kind, key, sandbox   string
	amount, held, bal, heldAf int64
	start, end                *time.Time
}

// journal reads the whole credit journal in seq order.
func journal(t testing.TB, tx pgx.Tx) []entry {
	t.Helper()
	rows, err := tx.Query(t.Context(), `SELECT seq, org_id, kind, idempotency_key, sandbox_id, amount_micros,
		held_micros, balance_after_micros, held_after_micros, period_start, period_end FROM credit_journal ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out []entry
		e   entry
	)
	_, err = pgx.ForEachRow(rows, []any{&e.seq, &e.org, &e.kind, &e.key, &e.sandbox, &e.amount,
		&e.held, &e.bal, &e.heldAf, &e.start, &e.end}, func() error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkJournal checks the keys, the acknowledged postings and the
// conservation of credits.
func checkJournal(t testing.TB, tx pgx.Tx, postings map[string]posting) {
	t.Helper()
	type sums struct{ balance, held int64 }
	byOrg := map[string]sums{}
	seen := map[[2]string]int{}
	byKey := map[string]entry{}
	for _, e := range journal(t, tx) {
		if seen[[2]string{e.org, e.key}]++; seen[[2]string{e.org, e.key}] == 2 {
			t.Errorf("idempotency key %q is in org %s's journal twice", e.key, e.org)
		}
		byKey[e.key] = e
		s := byOrg[e.org]
		s.balance += e.amount
		s.held += e.held
		if s.balance != e.bal || s.held != e.heldAf {
			t.Errorf("journal entry %d (%s %s) says balance %d and held %d after it; its movements sum to %d and %d",
				e.seq, e.kind, e.key, e.bal, e.heldAf, s.balance, s.held)
			s = sums{e.bal, e.heldAf} // one break, one error
		}
		byOrg[e.org] = s
	}
	for key, p := range postings {
		e, ok := byKey[key]
		// A grant moves the balance by its amount; an adjustment leaves
		// it at its amount.
		got := map[string]int64{"grant": e.amount, "adjustment": e.bal}[p.kind]
		if !ok || e.kind != p.kind || got != p.micros {
			t.Errorf("acknowledged %s %s of %d micro-credits: in the journal %v, %+v", p.kind, key, p.micros, ok, e)
		}
	}
	rows, err := tx.Query(t.Context(), "SELECT org_id, balance_micros, held_micros FROM credit_accounts")
	if err != nil {
		t.Fatal(err)
	}
	var (
		org string
		a   sums
	)
	_, err = pgx.ForEachRow(rows, []any{&org, &a.balance, &a.held}, func() error {
		if s := byOrg[org]; s != a {
			t.Errorf("org %s has balance %d and held %d; its journal sums to %d and %d", org, a.balance, a.held, s.balance, s.held)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("journal: %d grants and adjustments acknowledged, %d entries", len(postings), len(seen))
}

// checkBills checks each sandbox's bill against its settlements.
func checkBills(t testing.TB, tx pgx.Tx) {
	t.Helper()
	settled := map[string][]entry{}
	for _, e := range journal(t, tx) {
		if e.kind == "deduction" || e.kind == "refund" {
			settled[e.sandbox] = append(settled[e.sandbox], e)
		}
	}
	rows, err := tx.Query(t.Context(), "SELECT id, billed_micros FROM sandboxes")
	if err != nil {
		t.Fatal(err)
	}
	var (
		id     string
		billed int64
		n      int
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &billed}, func() error {
		var sum int64
		for _, e := range settled[id] {
			sum -= e.amount
		}
		if sum != billed {
			t.Errorf("sandbox %s is billed %d micro-credits; its settlements took %d", id, billed, sum)
		}
		if at, ok := chargedTwice(settled[id]); ok {
			t.Errorf("sandbox %s is charged twice at %s: %+v", id, at.Format(time.RFC3339Nano), settled[id])
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bills: %d sandboxes, %d of them settled", n, len(settled))
}

// chargedTwice sweeps a sandbox's settlements: each deduction covers its
// period [start, end) once more, each refund once less; it returns an
// instant covered twice, if there is one.
func chargedTwice(es []entry) (time.Time, bool) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, e := range es {
		if e.start == nil || e.end == nil || !e.end.After(*e.start) {
			continue
		}
		d := 1
		if e.kind == "refund" {
			d = -1
		}
		edges = append(edges, edge{*e.start, d}, edge{*e.end, -d})
	}
	// At one instant the ends come before the starts: periods that only
	// touch do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta))
	})
	cover := 0
	for _, e := range edges {
		if cover += e.delta; cover > 1 {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// TestChargedTwice: the sweep checkLedger runs over a sandbox's
// settlements finds an instant two deductions cover, unless a refund
// gave one of them back there, and lets periods that only touch be.
func TestChargedTwice(t *testing.T) {
	at := func(s int) *time.Time {
		v := time.Unix(1_700_000_000+int64(s), 0)
		return &v
	}
	charge := func(kind string, from, to int) entry { return entry{kind: kind, start: at(from), end: at(to)} }
	for _, tc := range []struct {
		name  string
		es    []entry
		twice bool
	}{
		{"back to back", []entry{charge("deduction", 0, 2), charge("deduction", 2, 3), charge("deduction", 3, 5)}, false},
		{"overlap", []entry{charge("deduction", 0, 2), charge("deduction", 1, 3)}, true},
		{"the same interval twice", []entry{charge("deduction", 0, 2), charge("deduction", 0, 2)}, true},
		{"paused, refunded and resumed", []entry{
			charge("deduction", 0, 2), charge("refund", 1, 2), charge("deduction", 1, 3),
		}, false},
		{"resumed inside the refunded part only", []entry{
			charge("deduction", 0, 4), charge("refund", 2, 4), charge("deduction", 1, 3),
		}, true},
	} {
		if _, got := chargedTwice(tc.es); got != tc.twice {
			t.Errorf("%s: charged twice %v, want %v", tc.name, got, tc.twice)
		}
	}
}
