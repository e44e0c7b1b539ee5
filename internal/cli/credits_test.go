package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestCreditsCommands runs credits, usage and workspace seats through the
// CLI against the real API, billed at 0.001 credits per core-second with
// the first minute prepaid.
func TestCreditsCommands(t *testing.T) {
	t.Parallel()
	clock := testenv.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	srv := servertest.New(t, servertest.Options{
		Now:     clock.Now,
		Pricing: &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
	})
	env := clitest.Env(srv.URL, srv.Key)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	clitest.MustRun(t, env, "project", "create", "a", "--cpu", "1")
	clitest.MustRun(t, env, "project", "create", "b", "--cpu", "1")

	if d := detail(strings.SplitN(clitest.MustRun(t, env, "credits"), "\n\n", 2)[0]); d["BALANCE"] != "0.000000" || d["AVAILABLE"] != "0.000000" {
		t.Fatalf("empty credits = %v", d)
	}
	_, errOut, code := clitest.Run(t, env, "runtime", "start", "a")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(insufficient_credits)\n") {
		t.Fatalf("start without credits: exit %d, stderr %q", code, errOut)
	}

	creditGrants(t, env)

	rt := clitest.JSON[client.Runtime](t, env, "runtime", "start", "a")
	clock.Advance(2 * time.Minute)
	// sandbox ls shows billed (the prepaid minute) and estimated credits.
	rows := table(clitest.MustRun(t, env, "sandbox", "ls"))
	header := strings.Join(rows[0], " ")
	if !strings.Contains(header, "BILLED ESTIMATED") || len(rows) != 2 {
		t.Fatalf("sandbox table:\n%v", rows)
	}
	col := func(name string) string {
		for i, h := range rows[0] {
			if h == name {
				return rows[1][i]
			}
		}
		return ""
	}
	if col("BILLED") != "0.0600" || col("ESTIMATED") != "0.1200" {
		t.Fatalf("billed %s, estimated %s; want 0.0600 and 0.1200", col("BILLED"), col("ESTIMATED"))
	}

	out := clitest.MustRun(t, env, "credits")
	head, recent, _ := strings.Cut(out, "\n\n")
	if d := detail(head); d["BALANCE"] != "3.440000" {
		t.Fatalf("credits after the start:\n%s", out)
	}
	if r := table(recent); len(r) != 5 || r[1][2] != "deduction" || r[2][2] != "hold" {
		t.Fatalf("recent movements:\n%s", recent)
	}
	holds := clitest.JSON[client.List[client.CreditEntry]](t, env, "credits", "journal", "--kind", "hold", "--runtime", rt.ID)
	if len(holds.Items) != 1 || holds.Items[0].RuntimeID != rt.ID {
		t.Fatalf("holds = %+v", holds.Items)
	}
	u := clitest.JSON[client.Usage](t, env, "usage", "--by", "runtime", "--from", "2026-03-01")
	if len(u.Items) != 1 || u.Items[0].Key != rt.ID || u.Items[0].Net != 0.06 {
		t.Fatalf("usage = %+v", u)
	}
	if out := clitest.MustRun(t, env, "usage", "--by", "sandbox", "--from", "87600h"); !strings.Contains(out, "TOTAL:") {
		t.Fatalf("usage table:\n%s", out)
	}

	seatLimits(t, env, clock)
	clitest.MustRun(t, env, "runtime", "resume", "a")

	// The balance, set to zero: the settler pauses the running runtime.
	clitest.MustRun(t, env, "credits", "set-balance", "0", "--idempotency-key", "drain")
	clock.Advance(2 * time.Minute)
	if _, err := srv.Ledger.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := clitest.JSON[client.Runtime](t, env, "runtime", "get", "a"); got.PauseReason != client.PauseInsufficientCredits {
		t.Fatalf("runtime out of credits = %+v", got)
	}

	creditsUsageErrors(t, env)
}

// seatLimits: over a workspace's member limit, its compute pauses and
// starts are refused.
func seatLimits(t *testing.T, env map[string]string, clock *testenv.Clock) {
	clitest.MustRun(t, env, "workspace", "set-limit", "1")
	clitest.MustRun(t, env, "workspace", "members", "add", "alice@example.com")
	clock.Advance(time.Second)
	clitest.MustRun(t, env, "workspace", "members", "add", "bob@example.com")
	if d := detail(clitest.MustRun(t, env, "workspace", "limit")); d["MEMBER_LIMIT"] != "1" || d["MEMBERS"] != "2" || d["OVER_LIMIT"] != "true" {
		t.Fatalf("limit = %v", d)
	}
	if got := clitest.JSON[client.Runtime](t, env, "runtime", "get", "a"); got.Status != client.RuntimePaused || got.PauseReason != client.PauseMemberLimitExceeded {
		t.Fatalf("runtime over the limit = %+v", got)
	}
	_, errOut, code := clitest.Run(t, env, "runtime", "start", "b")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(member_limit_exceeded)\n") {
		t.Fatalf("start over the limit: exit %d, stderr %q", code, errOut)
	}
	if r := table(clitest.MustRun(t, env, "workspace", "members", "ls")); len(r) != 3 || r[1][0] != "alice@example.com" || r[2][0] != "bob@example.com" {
		t.Fatalf("members:\n%v", r)
	}
	if out := clitest.MustRun(t, env, "workspace", "members", "rm", "bob@example.com"); out != "removed member bob@example.com\n" {
		t.Fatalf("rm: %q", out)
	}
}

// creditsUsageErrors: bad amounts, dates and verbs are usage errors.
func creditsUsageErrors(t *testing.T, env map[string]string) {
	for _, bad := range [][]string{
		{"credits", "grant", "-1"},
		{"credits", "grant", "lots"},
		{"credits", "grant"},
		{"credits", "journal", "--from", "last tuesday"},
		{"workspace", "set-limit", "x"},
		{"credits", "nonsense"},
	} {
		if _, errOut, code := clitest.Run(t, env, bad...); code != cli.ExitUsage {
			t.Errorf("paddock %s: exit %d (stderr %q), want a usage error", strings.Join(bad, " "), code, errOut)
		}
	}
}

// creditGrants: a grant is kept once per idempotency key, and the CLI
// makes a key when none is given.
func creditGrants(t *testing.T, env map[string]string) {
	first := clitest.JSON[client.CreditEntry](t, env, "credits", "grant", "2.5", "--idempotency-key", "inv-1", "--note", "march")
	again := clitest.JSON[client.CreditEntry](t, env, "credits", "grant", "2.5", "--idempotency-key", "inv-1")
	if first.ID != again.ID || first.Amount != 2.5 || first.Note != "march" {
		t.Fatalf("grant = %+v, retry = %+v", first, again)
	}
	_, errOut, code := clitest.Run(t, env, "credits", "grant", "3", "--idempotency-key", "inv-1")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(idempotency_key_reused)\n") {
		t.Fatalf("reused key: exit %d, stderr %q", code, errOut)
	}
	if e := clitest.JSON[client.CreditEntry](t, env, "credits", "grant", "1"); !strings.HasPrefix(e.IdempotencyKey, "cli-") {
		t.Fatalf("a grant without a key got key %q", e.IdempotencyKey)
	}
}
