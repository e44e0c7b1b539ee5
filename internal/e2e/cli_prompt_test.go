package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestCLIPrompt runs prompt and task through the CLI against a Docker
// runtime whose harness CLIs are the stand-ins of the test image: a turn
// printed as it streams, continued from standard input, as NDJSON and as
// one result, and failed turns. How the CLI prints each kind of event is
// held in internal/cli (TestSessionCommands), from a stored transcript.
func TestCLIPrompt(t *testing.T) {
	s := runningSandbox(t)
	s.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"})
	s.env.Must(t, 200, "PATCH", s.rtPath, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	s.env.Must(t, 200, "POST", s.rtPath+"/reset", nil)
	s.env.Must(t, 200, "POST", s.rtPath+"/start", nil)
	env := clitest.Env(s.env.URL, s.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"

	out, errOut, code := clitest.Run(t, env, "prompt", "p1", "list the workspace please", "--timeout", "90s")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.Contains(out, "\n→ ") || !strings.Contains(out, "\n← ") || !strings.HasPrefix(lines[len(lines)-1], "usage: ") {
		t.Fatalf("stdout:\n%s", out)
	}
	sessions := clitest.JSON[pc.List[pc.Session]](t, env, "session", "ls", "p1")
	if len(sessions.Items) != 1 {
		t.Fatalf("sessions: %+v", sessions.Items)
	}
	sid := sessions.Items[0].ID
	if errOut != "session "+sid+" (continue with --session "+sid+")\n" {
		t.Fatalf("stderr = %q", errOut)
	}

	// Continued, with the prompt from standard input.
	out, errOut, code = clitest.RunInput(t, env, "and now?\n", "prompt", "p1", "--session", sid, "-")
	if code != cli.ExitOK || !strings.Contains(out, "previous prompt: list the workspace please") {
		t.Fatalf("continue: exit %d\n%s\n%s", code, out, errOut)
	}

	// --json: the events themselves.
	out = clitest.MustRun(t, env, "prompt", "p1", "again", "--json")
	events := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range events {
		var ev pc.SessionEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Seq == 0 || (i == 0 && (ev.Role != "user" || ev.Text != "again")) || (i == len(events)-1 && ev.Done == nil) {
			t.Fatalf("event %d: %s (%v)", i, l, err)
		}
	}

	// -o json: the result once the turn ends.
	res := clitest.JSON[pc.PromptResult](t, env, "prompt", "p1", "once more")
	if res.Result == "" || res.Session.Status != pc.SessionCompleted || len(res.Events) < 3 || res.Usage == nil {
		t.Fatalf("result %+v", res)
	}
	cliPromptFailures(t, env)
}

// cliPromptFailures: a turn the harness fails exits 1, in each output.
func cliPromptFailures(t *testing.T, env map[string]string) {
	t.Helper()
	for _, args := range [][]string{
		{"prompt", "p1", "please [fail]"},
		{"task", "p1", "please [fail]"},
		{"task", "p1", "please [fail]", "-o", "json"},
		{"task", "p1", "please [fail]", "--json"},
	} {
		out, errOut, code := clitest.Run(t, env, args...)
		if code != cli.ExitError {
			t.Fatalf("paddock %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		if len(args) == 3 && (!strings.HasPrefix(errOut, "error: ") && !strings.Contains(errOut, "\nerror: ") || !strings.Contains(errOut, "session ")) {
			t.Fatalf("paddock %s: stderr %q", strings.Join(args, " "), errOut)
		}
	}
}

// TestCLIPromptCutOff: a turn whose stream ends before its done event (a
// connection lost mid-turn) is an error, not a finished turn.
func TestCLIPromptCutOff(t *testing.T) {
	instance := testenv.Instance(t)
	srv := servertest.New(t, servertest.Options{
		Provider: testenv.DockerProvider(t, instance), Instance: instance, Image: testenv.TestImage, Wrap: cutDone,
	})
	env := clitest.Env(srv.URL, srv.Key)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	p := clitest.JSON[pc.Project](t, env, "project", "create", "p1", "--cpu", "0.5", "--memory", "128M")
	srv.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"})
	srv.Must(t, 200, "PATCH", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	clitest.MustRun(t, env, "runtime", "start", "p1")

	_, errOut, code := clitest.Run(t, env, "task", "p1", "hi")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "error: the event stream ended before the turn did: unexpected EOF\n") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// cutDone ends every NDJSON stream h answers before its done event.
func cutDone(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&cutWriter{ResponseWriter: w}, r)
	})
}

// cutWriter drops the line holding a done event and all after it.
type cutWriter struct {
	http.ResponseWriter
	cut bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	i := bytes.Index(p, []byte(`"type":"done"`))
	if c.cut || i < 0 || c.Header().Get("Content-Type") != "application/x-ndjson" {
		if c.cut {
			return len(p), nil
		}
		return c.ResponseWriter.Write(p)
	}
	c.cut = true
	_, err := c.ResponseWriter.Write(p[:bytes.LastIndexByte(p[:i], '\n')+1])
	return len(p), err
}

// Flush passes flushes on, so that events stream as they come.
func (c *cutWriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }
