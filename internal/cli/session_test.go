package cli_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

func TestSessionCommands(t *testing.T) {
	f, env := startCapabilityAPI(t)
	f.turn = aTurn
	clitest.MustRun(t, env, "prompt", "agent", "what is here?")
	clitest.MustRun(t, env, "prompt", "agent", "and now?", "--session", fakeID(5))
	f.turn = aFailedTurn
	if _, _, code := clitest.Run(t, env, "task", "agent", "fix\tit", "--json"); code != cli.ExitError {
		t.Fatalf("a failed task: exit %d", code)
	}

	rows := table(clitest.MustRun(t, env, "session", "ls", "agent"))
	if len(rows) != 3 || strings.Join(rows[0], " ") != "ID KIND HARNESS STATUS TURNS UPDATED TITLE" ||
		strings.Join(rows[1], " ") != fakeID(6)+" task claude failed 1 2026-03-04T05:06:08Z fix it" ||
		strings.Join(rows[2], " ") != fakeID(5)+" prompt claude completed 2 2026-03-04T05:06:07Z what is here?" {
		t.Fatalf("ls:\n%v", rows)
	}
	_, errOut, _ := clitest.Run(t, env, "session", "ls", "agent", "--limit", "1")
	if errOut != "more results: pass --cursor 1\n" || f.query("GET /api/v1/org/{org}/ws/{ws}/runtimes/{id}/sessions") != "limit=1" {
		t.Fatalf("paging: %q", errOut)
	}

	out := clitest.MustRun(t, env, "session", "show", "agent", fakeID(5))
	head, transcript, _ := strings.Cut(out, "\n\n")
	if d := detail(head); d["ID"] != fakeID(5) || d["KIND"] != "prompt" || d["TURNS"] != "2" || d["STATUS"] != "completed" {
		t.Fatalf("show:\n%s", out)
	}
	turn := "Let me look.\n" +
		`→ Bash {"command":"ls -la","timeout":10}` + "\n" +
		"← a.go b.go " + strings.Repeat("x", 149) + "…\n" +
		"Two Go files.\n" +
		"usage: 1200 input, 30 output, 900 cache read tokens, $0.0123\n"
	want := "── turn 1 · 2026-03-04T05:06:07Z\n> what is here?\n" + turn + "\n── turn 2 · 2026-03-04T05:06:07Z\n> and now?\n" + turn
	if transcript != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", transcript, want)
	}
	if out := clitest.MustRun(t, env, "session", "show", "agent", fakeID(6)); !strings.HasSuffix(out, "> fix it\nerror: rate limited (harness_failed)\n") {
		t.Fatalf("failed task:\n%s", out)
	}

	tr := decode[client.SessionTranscript](t, clitest.MustRun(t, env, "session", "show", "agent", fakeID(5), "--json"))
	if tr.ID != fakeID(5) || len(tr.Events) != 14 || tr.Events[13].Seq != 14 || tr.Events[7].Turn != 2 {
		t.Fatalf("--json: %+v", tr)
	}
	if _, errOut, code := clitest.Run(t, env, "session", "show", "agent", "nope"); code != cli.ExitError || !strings.HasSuffix(errOut, "(session_not_found)\n") {
		t.Fatalf("unknown session: exit %d %q", code, errOut)
	}
}
