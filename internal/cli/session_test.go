package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// aTurn is a turn that reads a directory and answers.
func aTurn() []client.SessionEvent {
	return []client.SessionEvent{
		{Type: client.SessionEventMessage, Role: "assistant", Text: "Let me look."},
		{Type: client.SessionEventToolCall, Tool: &client.ToolCall{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command": "ls -la",
 "timeout": 10}`)}},
		{Type: client.SessionEventToolResult, Result: &client.ToolResult{ID: "t1", Output: "a.go\nb.go\n" + strings.Repeat("x", 300)}},
		{Type: client.SessionEventMessage, Role: "assistant", Text: "Two Go files."},
		{Type: client.SessionEventUsage, Usage: &client.TurnUsage{InputTokens: 1200, OutputTokens: 30, CacheReadTokens: 900, CostUSD: 0.0123}},
		{Type: client.SessionEventDone, Done: &client.TurnDone{HarnessSessionID: "h-1", Result: "Two Go files."}},
	}
}

// aFailedTurn is a turn the harness gives up on.
func aFailedTurn() []client.SessionEvent {
	return []client.SessionEvent{
		{Type: client.SessionEventError, Error: &client.TurnError{Code: "harness_failed", Message: "rate limited"}},
		{Type: client.SessionEventDone, Done: &client.TurnDone{ExitCode: 1}},
	}
}

// turn is a prompt and the events the harness answered it with.
type turn struct {
	prompt string
	events []client.SessionEvent
}

// recordSession stores a session of the runtime of project agent that
// ran turns, at the API's clock, as the session service stores one; it
// returns the session's id.
func recordSession(t *testing.T, a *apiServer, kind, status string, turns ...turn) string {
	t.Helper()
	ctx := t.Context()
	rt := get[client.Runtime](t, a, agentRuntime(t, a))
	now := a.Clock.Now()
	s := store.Session{ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID, Kind: kind,
		Harness: "claude-code", Status: status, Title: turns[0].prompt, Turns: len(turns), CreatedAt: now, UpdatedAt: now}
	if err := a.Store.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	var rows []store.SessionEvent
	for i, tr := range turns {
		user := client.SessionEvent{Type: client.SessionEventMessage, Role: "user", Text: tr.prompt}
		for _, ev := range append([]client.SessionEvent{user}, tr.events...) {
			ev.Seq, ev.Turn, ev.Time = int64(len(rows)+1), i+1, now
			body, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, store.SessionEvent{SessionID: s.ID, Seq: ev.Seq, Turn: ev.Turn, Type: ev.Type, At: now, Body: body})
		}
	}
	if err := a.Store.AppendSessionEvents(ctx, rows); err != nil {
		t.Fatal(err)
	}
	s.Events = int64(len(rows))
	if err := a.Store.UpdateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func TestSessionCommands(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	prompt := recordSession(t, f, client.SessionPrompt, client.SessionCompleted, turn{"what is here?", aTurn()}, turn{"and now?", aTurn()})
	f.Clock.Advance(time.Second)
	task := recordSession(t, f, client.SessionTask, client.SessionFailed, turn{"fix\tit", aFailedTurn()})

	rows := table(clitest.MustRun(t, env, "session", "ls", "agent"))
	if len(rows) != 3 || strings.Join(rows[0], " ") != "ID KIND HARNESS STATUS TURNS UPDATED TITLE" ||
		strings.Join(rows[1], " ") != task+" task claude-code failed 1 2026-03-04T05:06:08Z fix it" ||
		strings.Join(rows[2], " ") != prompt+" prompt claude-code completed 2 2026-03-04T05:06:07Z what is here?" {
		t.Fatalf("ls:\n%v", rows)
	}
	const sessions = "GET /api/v1/org/{org}/ws/{ws}/runtimes/{id}/sessions"
	next := get[client.List[client.Session]](t, f, agentRuntime(t, f)+"/sessions?limit=1").NextCursor
	_, errOut, _ := clitest.Run(t, env, "session", "ls", "agent", "--limit", "1")
	if errOut != "more results: pass --cursor "+next+"\n" || f.query(sessions) != "limit=1" {
		t.Fatalf("paging: %q", errOut)
	}

	out := clitest.MustRun(t, env, "session", "show", "agent", prompt)
	head, transcript, _ := strings.Cut(out, "\n\n")
	if d := detail(head); d["ID"] != prompt || d["KIND"] != "prompt" || d["TURNS"] != "2" || d["STATUS"] != "completed" {
		t.Fatalf("show:\n%s", out)
	}
	want := "── turn 1 · 2026-03-04T05:06:07Z\n> what is here?\n" + renderedTurn + "\n── turn 2 · 2026-03-04T05:06:07Z\n> and now?\n" + renderedTurn
	if transcript != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", transcript, want)
	}
	if out := clitest.MustRun(t, env, "session", "show", "agent", task); !strings.HasSuffix(out, "> fix it\nerror: rate limited (harness_failed)\n") {
		t.Fatalf("failed task:\n%s", out)
	}

	tr := decode[client.SessionTranscript](t, clitest.MustRun(t, env, "session", "show", "agent", prompt, "--json"))
	if tr.ID != prompt || len(tr.Events) != 14 || tr.Events[13].Seq != 14 || tr.Events[7].Turn != 2 {
		t.Fatalf("--json: %+v", tr)
	}
	if _, errOut, code := clitest.Run(t, env, "session", "show", "agent", uuid.NewString()); code != cli.ExitError || !strings.HasSuffix(errOut, "(session_not_found)\n") {
		t.Fatalf("unknown session: exit %d %q", code, errOut)
	}
}

// renderedTurn is aTurn as the CLI prints it.
var renderedTurn = "Let me look.\n" +
	`→ Bash {"command":"ls -la","timeout":10}` + "\n" +
	"← a.go b.go " + strings.Repeat("x", 149) + "…\n" +
	"Two Go files.\n" +
	"usage: 1200 input, 30 output, 900 cache read tokens, $0.0123\n"
