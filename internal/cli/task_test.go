package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestTaskCommands: `task run` sends the batch it was asked for (the
// runtime by name, the command after --, the score as a shell command)
// and prints its tasks; `task ls`, `task show` and `task cancel` read and
// act on them; `task RUNTIME PROMPT` is still a harness turn. The fake
// provider runs no agent, so the tasks fail, and say why.
func TestTaskCommands(t *testing.T) {
	a, env := startScoped(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "agent")
	rid := get[client.Project](t, a, "/api/v1/org/acme/ws/dev/projects/agent").RuntimeID

	out := clitest.MustRun(t, env, "task", "run", "--runtime", "agent", "--count", "2", "--concurrency", "1",
		"--timeout", "90s", "--score", "cat score.json", "--", "sh", "-c", "exit 3")
	var sent client.CreateTasksRequest
	if err := json.Unmarshal([]byte(a.body("POST /api/v1/org/{org}/ws/{workspace}/tasks")), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.RuntimeID != rid || strings.Join(sent.Argv, " ") != "sh -c exit 3" || strings.Join(sent.Score, "|") != "sh|-c|cat score.json" ||
		sent.Count != 2 || sent.Concurrency != 1 || sent.TimeoutSeconds != 90 {
		t.Fatalf("sent %+v", sent)
	}
	rows := clitest.Table(out)
	if len(rows) != 3 || rows[0][0] != "ID" || rows[1][2] != "pending" {
		t.Fatalf("task run printed %q", out)
	}
	id := rows[1][0]
	var tk client.Task
	testenv.WaitFor(t, "the task to end", func() bool {
		tk = clitest.JSON[client.Task](t, env, "task", "show", id, "-o", "json")
		return client.TaskDone(tk.Status)
	})
	if tk.Status != client.TaskFailed || !strings.Contains(tk.Error, "agent") {
		t.Fatalf("task %+v", tk)
	}
	show := clitest.MustRun(t, env, "task", "show", id)
	if !strings.Contains(show, "STATUS") || !strings.Contains(show, "failed") || !strings.Contains(show, `["sh" "-c" "exit 3"]`) {
		t.Fatalf("task show printed %q", show)
	}
	if l := clitest.Table(clitest.MustRun(t, env, "task", "ls", "--batch", tk.BatchID)); len(l) != 3 {
		t.Fatalf("task ls --batch printed %v", l)
	}
	if _, errOut, code := clitest.Run(t, env, "task", "cancel", id); code != cli.ExitError || !strings.Contains(errOut, "task_finished") {
		t.Fatalf("cancelling an ended task: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{
		{"task", "run", "--runtime", "agent", "--image", "x", "--", "true"}, // both sources
		{"task", "run", "--runtime", "agent"},                               // no command
		{"task", "run", "--prompt", "hi", "--", "true"},                     // a prompt and a command
		{"task", "run", "--template", "t", "--snapshot", "s", "--", "true"}, // two sources
	} {
		if _, _, code := clitest.Run(t, env, args...); code != cli.ExitUsage {
			t.Fatalf("%q: exit %d, want usage", args, code)
		}
	}
	clitest.MustRun(t, env, "task", "run", "--runtime", "agent", "--prompt", "review the code", "--harness", "codex", "--model", "m1")
	sent = client.CreateTasksRequest{}
	if err := json.Unmarshal([]byte(a.body("POST /api/v1/org/{org}/ws/{workspace}/tasks")), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Prompt != "review the code" || sent.Harness != "codex" || sent.Model != "m1" || len(sent.Argv) != 0 {
		t.Fatalf("a prompt task sent %+v", sent)
	}
	// --template and --snapshot name the batch's source; an unknown one
	// is the server's 404.
	clitest.MustRun(t, env, "template", "create", "tpl")
	clitest.MustRun(t, env, "task", "run", "--template", "tpl", "--", "true")
	sent = client.CreateTasksRequest{}
	if err := json.Unmarshal([]byte(a.body("POST /api/v1/org/{org}/ws/{workspace}/tasks")), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Template != "tpl" || sent.Runtime != nil || sent.RuntimeID != "" {
		t.Fatalf("a template task sent %+v", sent)
	}
	missing := "6f1c1b7e-0000-4000-8000-000000000000"
	if _, errOut, code := clitest.Run(t, env, "task", "run", "--snapshot", missing, "--", "true"); code != cli.ExitError || !strings.Contains(errOut, "snapshot_not_found") {
		t.Fatalf("a task from a missing snapshot: exit %d, %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(a.body("POST /api/v1/org/{org}/ws/{workspace}/tasks")), &sent); err != nil || sent.Snapshot != missing {
		t.Fatalf("a snapshot task sent %+v (%v)", sent, err)
	}
	// --wait waits for the batch, prints it, and fails when a task did.
	out, _, code := clitest.Run(t, env, "task", "run", "--wait", "true")
	if code != cli.ExitError || !strings.Contains(out, "failed") {
		t.Fatalf("task run --wait: exit %d, %q", code, out)
	}
}
