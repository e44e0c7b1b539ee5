package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/backup"
	"github.com/paddockhq/paddock/internal/store/backup/backuptest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// grants is how many credits a writer posts while a backup runs.
const grants = 5

// TestBackupIsOneMoment posts credits while a backup is half written
// (after the accounts, before the journal): the backup still holds the
// ledger as it was when it began, its journal agreeing with its balances,
// on SQLite and on PostgreSQL; the writes themselves went through.
func TestBackupIsOneMoment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := backuptest.Installation(t, dir)
	lite := backup.Location{DataDir: dir}
	checkOneMoment(t, lite, func(i int) error {
		_, err := st.PostCredit(ctx, store.CreditPosting{OrgID: backuptest.ID(1), Kind: store.EntryGrant,
			AmountMicros: 1000, IdempotencyKey: fmt.Sprintf("during-%d", i), At: time.Now()})
		return err
	})

	var file bytes.Buffer
	if _, err := backup.Backup(ctx, lite, &file); err != nil {
		t.Fatal(err)
	}
	pg := backup.Location{DataDir: freshDir(t, lite), Database: testenv.Postgres(t)}
	if _, err := backup.Restore(ctx, pg, &file, backup.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	checkOneMoment(t, pg, func(i int) error { return pgGrant(ctx, conn, i) })
}

// checkOneMoment backs l up, calling write grants times once the credit
// accounts are written, and checks the backup's ledger.
func checkOneMoment(t *testing.T, l backup.Location, write func(i int) error) {
	t.Helper()
	ctx := context.Background()
	before := ledger(t, l)
	var file bytes.Buffer
	m, err := backup.BackupPausing(ctx, l, &file, func(table string) {
		if table != "credit_accounts" {
			return
		}
		for i := range grants {
			if err := write(i); err != nil {
				t.Errorf("a write during the backup: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Ledger != before || m.Rows["credit_journal"] != before.LastSeq {
		t.Fatalf("the backup's ledger %+v (%d entries), before it began %+v", m.Ledger, m.Rows["credit_journal"], before)
	}
	if after := ledger(t, l); after.LastSeq != before.LastSeq+grants || after.Balance != before.Balance+grants*1000 {
		t.Fatalf("the writes during the backup: ledger %+v, before %+v", after, before)
	}
	target := backup.Location{DataDir: freshDir(t, l)}
	if _, err := backup.Restore(ctx, target, &file, backup.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, target); got != before {
		t.Fatalf("restored ledger %+v, want %+v", got, before)
	}
}

// ledger reads l's ledger sums with a backup of its own.
func ledger(t *testing.T, l backup.Location) backup.Sums {
	t.Helper()
	var buf bytes.Buffer
	m, err := backup.Backup(context.Background(), l, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return m.Ledger
}

// pgGrant posts a grant on PostgreSQL as the store does: a journal entry
// and the account's new balance in one transaction.
func pgGrant(ctx context.Context, conn *pgx.Conn, i int) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var balance, held int64
		if err := tx.QueryRow(ctx, `UPDATE credit_accounts SET balance_micros = balance_micros + 1000
			WHERE org_id = $1 RETURNING balance_micros, held_micros`, backuptest.ID(1)).Scan(&balance, &held); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO credit_journal (id, org_id, kind, amount_micros, held_micros,
			balance_after_micros, held_after_micros, idempotency_key, created_at)
			VALUES ($1, $2, 'grant', 1000, 0, $3, $4, $5, now())`,
			fmt.Sprintf("pg-during-%d", i), backuptest.ID(1), balance, held, fmt.Sprintf("pg-during-%d", i))
		return err
	})
}

// TestBackupWhileWriting takes backups while a writer posts credits
// without pause: neither fails, and each backup's journal agrees with its
// balances (every grant moves both by its amount).
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := backuptest.Installation(t, dir)
	l := backup.Location{DataDir: dir}
	base := ledger(t, l)
	stop, posted := make(chan struct{}), make(chan int, 1)
	werr := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				werr <- nil
				return
			default:
			}
			if _, err := st.PostCredit(ctx, store.CreditPosting{OrgID: backuptest.ID(1), Kind: store.EntryGrant,
				AmountMicros: 1000, IdempotencyKey: fmt.Sprintf("w-%d", i), At: time.Now()}); err != nil {
				werr <- err
				return
			}
			select {
			case posted <- i:
			default:
			}
		}
	}()
	for range 3 {
		<-posted // the writer is under way
		var file bytes.Buffer
		m, err := backup.Backup(ctx, l, &file)
		if err != nil {
			t.Fatal(err)
		}
		if m.Ledger.Journal-m.Ledger.Balance != base.Journal-base.Balance || m.Rows["credit_journal"] != m.Ledger.LastSeq ||
			m.Ledger.LastSeq <= base.LastSeq {
			t.Fatalf("a backup during writes: ledger %+v, %d entries; before the writes %+v", m.Ledger, m.Rows["credit_journal"], base)
		}
		if _, err := backup.Restore(ctx, backup.Location{DataDir: freshDir(t, l)}, &file, backup.RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-werr; err != nil {
		t.Fatalf("the writer: %v", err)
	}
}
