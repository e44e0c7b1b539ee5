package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/pkg/client"
)

// allTools are the tools every server has, sorted.
var allTools = []string{"add_host", "create_runtime", "delete_runtime", "exec", "list_files", "list_hosts", "list_runtimes", "pause_runtime",
	"preview_url", "prompt", "read_file", "remove_host", "resume_runtime", "start_runtime", "write_file"}

// env is a real API (servertest) whose fake provider's sandboxes have a
// real agent (shimtest, on the host), with org acme (workspace dev) and
// org other, and keys of each role.
type env struct {
	*servertest.Env
	// viewer and member are keys of acme's with those roles; foreign is
	// an admin key of org other.
	viewer, member, foreign client.CreatedKey
	fake                    *fake.Provider
}

// errDown is a provider that cannot start compute.
var errDown = errdefs.Unavailable("provider_down", "the provider is down")

func newEnv(t *testing.T) *env { return newEnvWith(t, api.Limits{}) }

// newEnvWith is newEnv with the API's limits.
func newEnvWith(t *testing.T, limits api.Limits) *env {
	t.Helper()
	dial := shimtest.Serve(t)
	fp := fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})
	e := &env{Env: servertest.New(t, servertest.Options{Provider: fp, Limits: limits}), fake: fp}
	e.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	e.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	e.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	e.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})
	e.viewer = e.userKey(t, "acme", "viewer@example.com", "viewer")
	e.member = e.userKey(t, "acme", "member@example.com", "member")
	e.foreign = e.userKey(t, "other", "foreign@example.com", "admin")
	return e
}

// userKey makes a user with role in org, and a key of theirs there.
func (e *env) userKey(t *testing.T, org, email, role string) client.CreatedKey {
	t.Helper()
	e.Must(t, 201, "POST", "/api/v1/users", client.CreateUserRequest{Email: email})
	e.Must(t, 201, "POST", "/api/v1/org/"+org+"/members", client.AddOrgMemberRequest{Member: email, Role: role})
	e.Must(t, 201, "POST", "/api/v1/org/"+org+"/ws/dev/members", client.AddMemberRequest{Member: email})
	var k client.CreatedKey
	e.Must(t, 201, "POST", "/api/v1/org/"+org+"/keys", client.CreateKeyRequest{Name: role, Member: email}).Decode(t, &k)
	return k
}

// sdkClient is a client of the API with key.
func (e *env) sdkClient(t *testing.T, key string) *client.Client {
	t.Helper()
	c, err := client.New(e.URL, key, client.WithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// connect serves the tools for key over the SDK's in-memory transport,
// with acme/dev as the defaults, and connects the SDK's client to them.
func (e *env) connect(t *testing.T, key string) *sdk.ClientSession {
	t.Helper()
	return connectTo(t, mcp.NewServer(e.sdkClient(t, key), mcp.Options{Org: "acme", Workspace: "dev", Version: "test"}))
}

func connectTo(t *testing.T, s *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error or a tool
// error; out receives its structured output.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res := callRaw(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, textOf(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", tool, b, err)
		}
	}
}

func callRaw(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", tool, args, err)
	}
	return res
}

// wantToolError calls a tool and fails the test unless it answers a tool
// error whose text starts with code.
func wantToolError(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, code string) {
	t.Helper()
	res := callRaw(t, cs, tool, args)
	if !res.IsError || !strings.HasPrefix(textOf(res), code+": ") {
		t.Fatalf("%s %v: isError %v, %q; want the tool error %s", tool, args, res.IsError, textOf(res), code)
	}
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestToolList: the server lists every tool, each with a description and
// an input and an output schema.
func TestToolList(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.Key)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("tool %s: description %q, input %v, output %v", tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Fatalf("tools = %v, want %v", names, allTools)
	}
	if init := cs.InitializeResult(); init.ServerInfo.Name != mcp.Name || init.ServerInfo.Version != "test" || init.Instructions == "" {
		t.Fatalf("initialize = %+v", init)
	}
}

// TestRuntimeTools: an admin's agent creates, lists, pauses, resumes and
// deletes a runtime; the API saw each action.
func TestRuntimeTools(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.Key)
	var rt mcp.Runtime
	call(t, cs, "create_runtime", map[string]any{"name": "agent", "memory_mb": 512}, &rt)
	if rt.Status != client.RuntimeIdle || rt.MemoryMB != 512 || rt.ID == "" {
		t.Fatalf("created %+v", rt)
	}
	call(t, cs, "start_runtime", map[string]any{"runtime": "agent"}, &rt)
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("started %+v", rt)
	}
	var list mcp.RuntimeList
	call(t, cs, "list_runtimes", map[string]any{"org": "acme", "workspace": "dev"}, &list)
	if len(list.Runtimes) != 1 || list.Runtimes[0].ID != rt.ID || list.Runtimes[0].Project != "agent" {
		t.Fatalf("listed %+v", list)
	}
	call(t, cs, "pause_runtime", map[string]any{"runtime": rt.ID}, &rt)
	if rt.Status != client.RuntimePaused {
		t.Fatalf("paused %+v", rt)
	}
	call(t, cs, "resume_runtime", map[string]any{"runtime": rt.ID}, &rt)
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("resumed %+v", rt)
	}
	// Created and started in one call.
	var two mcp.Runtime
	call(t, cs, "create_runtime", map[string]any{"name": "second", "start": true}, &two)
	if two.Status != client.RuntimeRunning {
		t.Fatalf("created and started %+v", two)
	}
	var del mcp.Deleted
	call(t, cs, "delete_runtime", map[string]any{"runtime": rt.ID}, &del)
	if !del.Deleted || del.RuntimeID != rt.ID {
		t.Fatalf("deleted %+v", del)
	}
	e.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/agent", nil)
	call(t, cs, "list_runtimes", nil, &list)
	if len(list.Runtimes) != 1 || list.Runtimes[0].ID != two.ID {
		t.Fatalf("after delete %+v", list)
	}
}

// TestCreateThatCannotStartKeepsNothing: a runtime create_runtime could
// not start is not left behind.
func TestCreateThatCannotStartKeepsNothing(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.Key)
	e.fake.FailNext(fake.OpCreate, errDown)
	res := callRaw(t, cs, "create_runtime", map[string]any{"name": "doomed", "start": true})
	if !res.IsError {
		t.Fatalf("create of a runtime that fails to start: %s", textOf(res))
	}
	e.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/doomed", nil)
}

// startedRuntime creates and starts a runtime with the admin key and
// returns its id.
func (e *env) startedRuntime(t *testing.T, name string) string {
	t.Helper()
	var p client.Project
	e.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: name}).Decode(t, &p)
	e.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	return p.RuntimeID
}

// TestExecAndFiles: commands and files through the tools, on a real
// agent.
func TestExecAndFiles(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	cs := e.connect(t, e.member.Key)
	dir := t.TempDir()

	var ex mcp.ExecOutput
	call(t, cs, "exec", map[string]any{"runtime": "box", "command": "echo out; echo err >&2; echo $GREETING; pwd; exit 3",
		"cwd": dir, "env": map[string]string{"GREETING": "hello"}}, &ex)
	if ex.ExitCode != 3 || ex.Stdout != "out\nhello\n"+dir+"\n" || ex.Stderr != "err\n" || ex.StdoutTruncated || ex.TimedOut {
		t.Fatalf("exec = %+v", ex)
	}
	call(t, cs, "exec", map[string]any{"runtime": id, "argv": []string{"cat"}, "stdin": "piped"}, &ex)
	if ex.ExitCode != 0 || ex.Stdout != "piped" {
		t.Fatalf("exec argv = %+v", ex)
	}
	call(t, cs, "exec", map[string]any{"runtime": id, "command": "head -c 100 /dev/zero | tr '\\0' x", "max_output_bytes": 10}, &ex)
	if ex.Stdout != "xxxxxxxxxx" || !ex.StdoutTruncated || ex.StderrTruncated {
		t.Fatalf("exec truncated = %+v", ex)
	}
	call(t, cs, "exec", map[string]any{"runtime": id, "command": "sleep 30", "timeout_seconds": 1}, &ex)
	if !ex.TimedOut {
		t.Fatalf("exec past its timeout = %+v", ex)
	}

	path := filepath.Join(dir, "sub", "notes.txt")
	var f mcp.File
	call(t, cs, "write_file", map[string]any{"runtime": id, "path": path, "content": "héllo\nworld\n", "mode": "0600"}, &f)
	if f.Size != 13 || f.Mode != "0600" || f.Type != "file" {
		t.Fatalf("write_file = %+v", f)
	}
	var fc mcp.FileContent
	call(t, cs, "read_file", map[string]any{"runtime": id, "path": path}, &fc)
	if fc.Content != "héllo\nworld\n" || fc.Truncated || fc.Size != 13 || fc.Encoding != "text" {
		t.Fatalf("read_file = %+v", fc)
	}
	// A read cut inside a character leaves it for the next read.
	call(t, cs, "read_file", map[string]any{"runtime": id, "path": path, "length": 2}, &fc)
	if fc.Content != "h" || !fc.Truncated {
		t.Fatalf("read_file of 2 bytes = %+v", fc)
	}
	bin := []byte{0, 1, 2, 0xff, 0xfe}
	call(t, cs, "write_file", map[string]any{"runtime": id, "path": path + ".bin", "content": base64.StdEncoding.EncodeToString(bin), "encoding": "base64"}, &f)
	call(t, cs, "read_file", map[string]any{"runtime": id, "path": path + ".bin", "encoding": "base64", "offset": 3}, &fc)
	if fc.Content != base64.StdEncoding.EncodeToString(bin[3:]) || fc.Size != 5 {
		t.Fatalf("read_file base64 = %+v", fc)
	}
	wantToolError(t, cs, "read_file", map[string]any{"runtime": id, "path": path + ".bin"}, "not_text")
	var fl mcp.FileList
	call(t, cs, "list_files", map[string]any{"runtime": id, "path": filepath.Join(dir, "sub")}, &fl)
	var names []string
	for _, f := range fl.Files {
		names = append(names, filepath.Base(f.Path))
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"notes.txt", "notes.txt.bin"}) || fl.Truncated {
		t.Fatalf("list_files = %+v", fl)
	}
}

// TestPreviewURL: a private port's URL carries a new preview token; a
// public port's is the plain URL.
func TestPreviewURL(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "web")
	cs := e.connect(t, e.member.Key)
	var pv mcp.Preview
	call(t, cs, "preview_url", map[string]any{"runtime": id, "port": 8080, "ttl": "10m"}, &pv)
	if pv.Public || !strings.Contains(pv.URL, "?token=") || pv.ExpiresAt == "" ||
		!strings.HasPrefix(pv.PathURL, e.URL+"/api/v1/org/acme/ws/dev/runtimes/"+id+"/ports/8080/?token=") {
		t.Fatalf("private preview = %+v", pv)
	}
	e.Must(t, 200, "PATCH", "/api/v1/org/acme/ws/dev/runtimes/"+id+"/previews/8080", client.SetPortRequest{Public: true})
	pv = mcp.Preview{}
	call(t, cs, "preview_url", map[string]any{"runtime": id, "port": 8080}, &pv)
	if !pv.Public || strings.Contains(pv.URL, "token") || pv.ExpiresAt != "" {
		t.Fatalf("public preview = %+v", pv)
	}
	wantToolError(t, cs, "preview_url", map[string]any{"runtime": id, "port": 70000}, "invalid_port")
}

// TestToolErrors: mistakes are tool errors with the API's code (or the
// tool's own), never protocol failures.
func TestToolErrors(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	cs := e.connect(t, e.Key)
	bare := connectTo(t, mcp.NewServer(e.sdkClient(t, e.Key), mcp.Options{}))
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"no default org", "list_runtimes", nil, "missing_org"},
		{"no default workspace", "list_runtimes", map[string]any{"org": "acme"}, "missing_workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantToolError(t, bare, tc.tool, tc.args, tc.code) })
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"unknown runtime id", "exec", map[string]any{"runtime": "4b0b3c8e-0f5e-4d9a-9d0e-3f8f6c1b2a7d", "command": "true"}, "runtime_not_found"},
		{"unknown project", "start_runtime", map[string]any{"runtime": "nope"}, "project_not_found"},
		{"unknown org", "list_runtimes", map[string]any{"org": "nope"}, "org_not_found"},
		{"command and argv", "exec", map[string]any{"runtime": id, "command": "true", "argv": []string{"true"}}, "invalid_command"},
		{"no command", "exec", map[string]any{"runtime": id}, "invalid_command"},
		{"a missing program", "exec", map[string]any{"runtime": id, "argv": []string{"/no/such/program"}}, "command_not_found"},
		{"a relative path", "read_file", map[string]any{"runtime": id, "path": "notes.txt"}, "invalid_path"},
		{"a missing file", "read_file", map[string]any{"runtime": id, "path": "/no/such/file"}, "file_not_found"},
		{"bad base64", "write_file", map[string]any{"runtime": id, "path": "/tmp/x", "content": "!!", "encoding": "base64"}, "invalid_content"},
		{"an unknown encoding", "read_file", map[string]any{"runtime": id, "path": "/tmp/x", "encoding": "utf16"}, "invalid_encoding"},
		{"an already running runtime", "start_runtime", map[string]any{"runtime": id}, "runtime_already_running"},
		{"no model credential", "prompt", map[string]any{"runtime": id, "prompt": "hi"}, "harness_secret_missing"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantToolError(t, cs, tc.tool, tc.args, tc.code) })
	}
	// Arguments of the wrong shape are refused by the schema, still as a
	// tool error.
	for _, args := range []map[string]any{{"runtime": 5, "command": "true"}, {"runtime": id, "command": "true", "shell": "bash"}, {"command": "true"}} {
		if res := callRaw(t, cs, "exec", args); !res.IsError || !strings.Contains(textOf(res), "arguments") {
			t.Fatalf("exec %v: %v %s", args, res.IsError, textOf(res))
		}
	}
}

// TestScopedByKey: a key of another org sees and reaches nothing of
// acme's; a viewer lists but neither creates nor runs anything.
func TestScopedByKey(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	dir := t.TempDir()

	foreign := e.connect(t, e.foreign.Key)
	wantToolError(t, foreign, "list_runtimes", nil, "org_not_found")
	for tool, args := range map[string]map[string]any{
		"exec":           {"runtime": id, "command": "touch " + dir + "/pwned"},
		"read_file":      {"runtime": id, "path": "/etc/hostname"},
		"write_file":     {"runtime": id, "path": dir + "/pwned", "content": "x"},
		"start_runtime":  {"runtime": id},
		"pause_runtime":  {"runtime": id},
		"delete_runtime": {"runtime": id},
		"preview_url":    {"runtime": id, "port": 80},
		"create_runtime": {"name": "mine"},
	} {
		wantToolError(t, foreign, tool, args, "org_not_found")
	}
	// In its own org, acme's runtime is not there either.
	wantToolError(t, foreign, "exec", map[string]any{"org": "other", "runtime": id, "command": "touch " + dir + "/pwned"}, "runtime_not_found")
	var list mcp.RuntimeList
	call(t, foreign, "list_runtimes", map[string]any{"org": "other"}, &list)
	if len(list.Runtimes) != 0 {
		t.Fatalf("the foreign key lists %+v", list)
	}

	viewer := e.connect(t, e.viewer.Key)
	call(t, viewer, "list_runtimes", nil, &list)
	if len(list.Runtimes) != 1 {
		t.Fatalf("the viewer lists %+v", list)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"create_runtime", map[string]any{"name": "mine"}},
		{"exec", map[string]any{"runtime": id, "command": "touch " + dir + "/pwned"}},
		{"write_file", map[string]any{"runtime": id, "path": dir + "/pwned", "content": "x"}},
		{"pause_runtime", map[string]any{"runtime": id}},
		{"delete_runtime", map[string]any{"runtime": id}},
	} {
		res := callRaw(t, viewer, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(textOf(res), "role") {
			t.Errorf("viewer %s: %v %s", tc.tool, res.IsError, textOf(res))
		}
	}
	e.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/mine", nil)
	if ls := e.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+id+"/files/list?path="+dir, nil); strings.Contains(string(ls.Body), "pwned") {
		t.Fatalf("a refused key wrote: %s", ls.Body)
	}
	var rt client.Runtime
	e.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+id, nil).Decode(t, &rt)
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("runtime after the refusals: %+v", rt)
	}
}
