package api_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/providers/fake"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// raw sends a request with a body of the given content type ("" for none)
// and returns the status and the error code of the answer.
func raw(t *testing.T, env *servertest.Env, method, path, contentType, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, env.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.Key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, servertest.Response{Status: resp.StatusCode, Body: b}.Code()
}

// agentRoutes are one valid request to each route that reaches the agent.
var agentRoutes = []struct {
	method, path, contentType, body string
	header                          []string
}{
	{"POST", "/exec", "application/json", `{"argv":["true"]}`, nil},
	{"POST", "/exec", "application/json", `{"argv":["true"]}`, []string{"Accept", "application/x-ndjson"}},
	{"GET", "/processes", "", "", nil},
	{"GET", "/processes/p-1", "", "", nil},
	{"GET", "/processes/p-1/attach", "", "", nil},
	{"POST", "/processes/p-1/signal", "application/json", `{"signal":"TERM"}`, nil},
	{"POST", "/processes/p-1/stdin", "application/octet-stream", "x", nil},
	{"GET", "/files?path=/etc/hostname", "", "", nil},
	{"PUT", "/files?path=/tmp/x", "application/octet-stream", "x", nil},
	{"DELETE", "/files?path=/tmp/x", "", "", nil},
	{"GET", "/files/stat?path=/tmp", "", "", nil},
	{"GET", "/files/list?path=/tmp", "", "", nil},
	{"POST", "/files/mkdir", "application/json", `{"path":"/tmp/d"}`, nil},
	{"POST", "/files/rename", "application/json", `{"from":"/tmp/a","to":"/tmp/b"}`, nil},
	{"GET", "/files/tar?path=/tmp", "", "", nil},
	{"POST", "/files/tar?path=/tmp", "application/x-tar", "", nil},
	{"GET", "/terminal", "", "", []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}},
}

// TestAgentRoutesNeedARunningRuntime checks that every operation inside a
// sandbox answers 409 with a code that says what to do when the runtime
// has no sandbox, wakes a paused one, and answers 501 when its provider
// has no agent.
func TestAgentRoutesNeedARunningRuntime(t *testing.T) {
	env, _, rtPath := setup(t)
	check := func(t *testing.T, wantStatus int, wantCode string) {
		t.Helper()
		for _, r := range agentRoutes {
			status, code := raw(t, env, r.method, rtPath+r.path, r.contentType, r.body, r.header...)
			if status != wantStatus || code != wantCode {
				t.Errorf("%s %s: %d %s, want %d %s", r.method, r.path, status, code, wantStatus, wantCode)
			}
		}
	}
	t.Run("idle", func(t *testing.T) { check(t, http.StatusConflict, "runtime_not_running") })
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	t.Run("running on a provider without an agent", func(t *testing.T) { check(t, http.StatusNotImplemented, "agent_not_supported") })
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	t.Run("paused is woken first", func(t *testing.T) {
		// The first operation resumes the runtime and then reaches the
		// (absent) agent; the rest find it running.
		check(t, http.StatusNotImplemented, "agent_not_supported")
		var rt client.Runtime
		env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
		if rt.Status != client.RuntimeRunning {
			t.Fatalf("runtime after an operation while paused: %s, want running", rt.Status)
		}
	})
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	t.Run("reset", func(t *testing.T) { check(t, http.StatusConflict, "runtime_not_running") })

	// Another workspace's runtime is not found.
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "other"})
	other := strings.Replace(rtPath, "/ws/dev/", "/ws/other/", 1)
	if status, code := raw(t, env, "GET", other+"/processes", "", ""); status != 404 || code != "runtime_not_found" {
		t.Fatalf("runtime of another workspace: %d %s", status, code)
	}
}

// TestAgentRoutesRefuseBadInput checks that bad input is refused with a
// 4xx before anything reaches a sandbox.
func TestAgentRoutesRefuseBadInput(t *testing.T) {
	env, _, rtPath := setup(t)
	tests := []struct {
		name                            string
		method, path, contentType, body string
		wantStatus                      int
		wantCode                        string
	}{
		{"empty path", "GET", "/files?path=", "", "", 400, "invalid_path"},
		{"no path", "GET", "/files/stat", "", "", 400, "invalid_path"},
		{"relative path", "GET", "/files?path=etc/passwd", "", "", 400, "invalid_path"},
		{"dot-relative path", "DELETE", "/files?path=./x", "", "", 400, "invalid_path"},
		{"NUL in path", "PUT", "/files?path=/tmp/a%00b", "application/octet-stream", "x", 400, "invalid_path"},
		{"path twice", "GET", "/files/list?path=/a&path=/b", "", "", 400, "invalid_path"},
		{"relative tar dir", "POST", "/files/tar?path=tmp", "application/x-tar", "", 400, "invalid_path"},
		{"relative mkdir", "POST", "/files/mkdir", "application/json", `{"path":"d"}`, 400, "invalid_path"},
		{"relative rename source", "POST", "/files/rename", "application/json", `{"from":"a","to":"/b"}`, 400, "invalid_path"},
		{"no rename target", "POST", "/files/rename", "application/json", `{"from":"/a"}`, 400, "invalid_path"},
		{"mkdir mode", "POST", "/files/mkdir", "application/json", `{"path":"/d","mode":99999}`, 400, "invalid_mode"},
		{"file as JSON", "PUT", "/files?path=/tmp/x", "application/json", "{}", 415, "unsupported_media_type"},
		{"tar as octet-stream", "POST", "/files/tar?path=/tmp", "application/octet-stream", "", 415, "unsupported_media_type"},
		{"bad mode", "PUT", "/files?path=/tmp/x&mode=9", "application/octet-stream", "", 400, "invalid_mode"},
		{"bad flag", "DELETE", "/files?path=/tmp/x&recursive=maybe", "", "", 400, "invalid_recursive"},
		{"negative offset", "GET", "/files?path=/x&offset=-1", "", "", 400, "invalid_offset"},
		{"too many entries", "GET", "/files/list?path=/x&max_entries=100001", "", "", 400, "invalid_max_entries"},
		{"no argv", "POST", "/exec", "application/json", `{"argv":[]}`, 400, "invalid_command"},
		{"no body", "POST", "/exec", "application/json", "", 400, "missing_body"},
		{"NUL in argv", "POST", "/exec", "application/json", `{"argv":["echo","a\u0000b"]}`, 400, "invalid_command"},
		{"relative cwd", "POST", "/exec", "application/json", `{"argv":["ls"],"cwd":"tmp"}`, 400, "invalid_path"},
		{"bad env", "POST", "/exec", "application/json", `{"argv":["ls"],"env":{"A=B":"c"}}`, 400, "invalid_env"},
		{"negative timeout", "POST", "/exec", "application/json", `{"argv":["ls"],"timeout_ms":-1}`, 400, "invalid_timeout"},
		{"huge output bound", "POST", "/exec", "application/json", `{"argv":["ls"],"max_output_bytes":999999999}`, 400, "invalid_max_output"},
		{"open stdin, collected", "POST", "/exec", "application/json", `{"argv":["cat"],"open_stdin":true}`, 400, "invalid_stdin"},
		{"unknown field", "POST", "/exec", "application/json", `{"argv":["ls"],"tty":true}`, 400, "unknown_field"},
		{"bad process id", "GET", "/processes/p%2F1", "", "", 400, "invalid_process_id"},
		{"bad signal", "POST", "/processes/p-1/signal", "application/json", `{"signal":"NOPE"}`, 400, "invalid_signal"},
		{"negative attach offset", "GET", "/processes/p-1/attach?stdout_offset=-5", "", "", 400, "invalid_stdout_offset"},
		{"stdin as JSON", "POST", "/processes/p-1/stdin", "application/json", "{}", 415, "unsupported_media_type"},
		{"terminal without upgrade", "GET", "/terminal", "", "", 400, "websocket_required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := raw(t, env, tt.method, rtPath+tt.path, tt.contentType, tt.body)
			if status != tt.wantStatus || code != tt.wantCode {
				t.Fatalf("%d %s, want %d %s", status, code, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

// TestConcurrentWakersWakeOnce checks that operations arriving together on
// a paused runtime resume it once, and that every one of them then runs.
func TestConcurrentWakersWakeOnce(t *testing.T) {
	env, _, rtPath := setup(t)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	gate := make(chan struct{})
	env.Fake.SetGate(fake.OpResume, gate)

	const n = 8
	var wg sync.WaitGroup
	codes := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = env.Do(t, "GET", rtPath+"/processes", nil).Code()
		}()
	}
	// Hold the first resume until it has begun, so the other wakers
	// arrive while it is in flight.
	testenv.WaitFor(t, "a waker to resume the runtime", func() bool { return env.Fake.Calls(fake.OpResume) > 0 })
	close(gate)
	wg.Wait()
	for i, code := range codes {
		if code != "agent_not_supported" {
			t.Fatalf("waker %d: %q, want it woken and then answered agent_not_supported", i, code)
		}
	}
	if got := env.Fake.Calls(fake.OpResume); got != 1 {
		t.Fatalf("%d resumes for %d concurrent wakers, want 1", got, n)
	}
}

// TestWakeNeedsCredits checks that a wake the org cannot pay for answers
// 402 like a resume, and leaves the runtime paused.
func TestWakeNeedsCredits(t *testing.T) {
	env := servertest.New(t, servertest.Options{
		Pricing:      &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
		NewOrgMicros: 10_000_000,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	env.Must(t, 201, "POST", "/api/v1/org/acme/credits/balance", client.SetBalanceRequest{Balance: 0, IdempotencyKey: "empty"})

	if status, code := raw(t, env, "GET", rtPath+"/processes", "", ""); status != 402 || code != "insufficient_credits" {
		t.Fatalf("operation on a paused runtime of a broke org: %d %s, want 402 insufficient_credits", status, code)
	}
	var rt client.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != client.RuntimePaused {
		t.Fatalf("runtime after a refused wake: %s, want paused", rt.Status)
	}
}
