package sdks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// The MCP server against a live `paddock serve` on real Docker: the Go
// SDK's own client over /mcp, and a real MCP client CLI from the npm
// registry (the Inspector's CLI mode, pinned in mcpclient/) over stdio
// (`paddock mcp`) and over HTTP (/mcp), listing the tools and calling
// exec and read_file in a real sandbox.

// mcpWorld is a served paddock with org acme, workspace dev and a
// running runtime, and a key of another org's.
type mcpWorld struct {
	served    *testenv.Served
	runtimeID string
	foreign   string
}

func newMCPWorld(t *testing.T) *mcpWorld {
	t.Helper()
	s := testenv.Serve(t, testenv.ServeOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	c, err := client.New(s.URL, s.Key, client.WithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, org := range []string{"acme", "other"} {
		if _, err := c.CreateOrg(ctx, client.CreateOrgRequest{Name: org}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateWorkspace(ctx, org, client.CreateWorkspaceRequest{Name: "dev"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateUser(ctx, client.CreateUserRequest{Email: "foreign@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddOrgMember(ctx, "other", client.AddOrgMemberRequest{Member: "foreign@example.com", Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	k, err := c.CreateKey(ctx, "other", client.CreateKeyRequest{Name: "foreign", Member: "foreign@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(ctx, "acme", "dev", client.CreateProjectRequest{Name: "box"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, client.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	return &mcpWorld{served: s, runtimeID: p.RuntimeID, foreign: k.Key}
}

// connect connects the Go SDK's client to /mcp with key, acme/dev the
// defaults.
func (w *mcpWorld) connect(t *testing.T, key string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ct := &sdk.StreamableClientTransport{Endpoint: w.served.URL + "/mcp?org=acme&ws=dev",
		HTTPClient: &http.Client{Transport: bearer{key, tr}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// bearer adds a bearer credential to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// callOK calls a tool and fails the test unless it answers without a
// tool error; out receives its structured output.
func callOK(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res)
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, b)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: %s: %v", tool, raw, err)
	}
}

// TestMCPGoClientOverHTTP: the Go SDK's client over /mcp runs commands
// and moves files in a real sandbox; another org's key reaches none of
// it.
func TestMCPGoClientOverHTTP(t *testing.T) {
	w := newMCPWorld(t)
	cs := w.connect(t, w.served.Key)
	var ex struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
	}
	callOK(t, cs, "exec", map[string]any{"runtime": "box", "command": "echo $((6*7)) > /workspace/answer; cat /workspace/answer; hostname"}, &ex)
	if lines := strings.Fields(ex.Stdout); ex.ExitCode != 0 || len(lines) != 2 || lines[0] != "42" {
		t.Fatalf("exec = %+v", ex)
	}
	var f struct {
		Size int64 `json:"size"`
	}
	callOK(t, cs, "write_file", map[string]any{"runtime": w.runtimeID, "path": "/workspace/dir/note.md", "content": "# from MCP\n"}, &f)
	var fc struct {
		Content string `json:"content"`
	}
	callOK(t, cs, "read_file", map[string]any{"runtime": w.runtimeID, "path": "/workspace/dir/note.md"}, &fc)
	if f.Size != 11 || fc.Content != "# from MCP\n" {
		t.Fatalf("write_file %+v, read_file %+v", f, fc)
	}
	var fl struct {
		Files []struct{ Path string } `json:"files"`
	}
	callOK(t, cs, "list_files", map[string]any{"runtime": w.runtimeID, "path": "/workspace", "recursive": true}, &fl)
	var paths []string
	for _, f := range fl.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Contains(paths, "/workspace/dir/note.md") || !slices.Contains(paths, "/workspace/answer") {
		t.Fatalf("list_files = %v", paths)
	}

	foreign := w.connect(t, w.foreign)
	for tool, args := range map[string]map[string]any{
		"exec":      {"runtime": w.runtimeID, "command": "touch /workspace/pwned"},
		"read_file": {"runtime": w.runtimeID, "path": "/workspace/answer"},
	} {
		res, err := foreign.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(toolText(res), "org_not_found") {
			t.Fatalf("foreign %s: %v %+v", tool, err, res)
		}
	}
}

// TestMCPPrompt: an agent prompts another runtime's harness (the test
// image's stand-in for Claude Code) through the prompt tool, and
// continues the session it answered.
func TestMCPPrompt(t *testing.T) {
	w := newMCPWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	c, err := client.New(w.served.URL, w.served.Key, client.WithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSecret(ctx, "acme", "dev", client.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"}); err != nil {
		t.Fatal(err)
	}
	cs := w.connect(t, w.served.Key)
	var rt struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	callOK(t, cs, "create_runtime", map[string]any{"name": "helper"}, &rt)
	if _, err := c.ConfigureRuntime(ctx, "acme", "dev", rt.ID, client.RuntimePatch{Secrets: &[]string{"anthropic"}}); err != nil {
		t.Fatal(err)
	}
	callOK(t, cs, "start_runtime", map[string]any{"runtime": "helper"}, &rt)
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("started %+v", rt)
	}
	var first, second struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	callOK(t, cs, "prompt", map[string]any{"runtime": "helper", "prompt": "list the workspace please", "timeout_seconds": 90}, &first)
	if first.SessionID == "" || first.Result == "" {
		t.Fatalf("prompt = %+v", first)
	}
	callOK(t, cs, "prompt", map[string]any{"runtime": "helper", "prompt": "and now?", "session_id": first.SessionID, "timeout_seconds": 90}, &second)
	if second.SessionID != first.SessionID || !strings.Contains(second.Result, "previous prompt: list the workspace please") {
		t.Fatalf("continued prompt = %+v", second)
	}
}

func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// inspector runs the Inspector's CLI mode (mcpclient/) with args and
// returns what it printed: the JSON of the answer.
func inspector(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	modules := filepath.Join(testenv.RepoRoot(t), "internal", "e2e", "sdks", "mcpclient", "node_modules")
	bin := filepath.Join(modules, ".bin", "mcp-inspector-cli")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP client CLI is not installed (run scripts/js-deps.sh): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+testenv.NodeBin(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	// The CLI finds its own package.json as ../package.json of the
	// working directory: its build directory is where it works.
	cmd.Dir = filepath.Join(modules, "@modelcontextprotocol", "inspector-cli", "build")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-inspector-cli %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// inspectorResult is what the Inspector prints for tools/list and
// tools/call.
type inspectorResult struct {
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tools"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// TestMCPInspectorCLI: a real MCP client CLI, over stdio (`paddock mcp`)
// and over Streamable HTTP (/mcp), lists the tools and calls exec and
// read_file in a real sandbox.
func TestMCPInspectorCLI(t *testing.T) {
	w := newMCPWorld(t)
	paddock := testenv.Binary(t, "paddock")
	transports := map[string]struct {
		env    []string
		target []string
	}{
		"stdio": {
			// The server's command line is given before the CLI's own
			// options, which would take its flags: its defaults come from
			// its environment.
			env: []string{"PADDOCK_URL=" + w.served.URL, "PADDOCK_API_KEY=" + w.served.Key, "PADDOCK_ORG=acme", "PADDOCK_WS=dev",
				"XDG_CONFIG_HOME=" + t.TempDir()},
			target: []string{paddock, "mcp"},
		},
		"http": {
			target: []string{w.served.URL + "/mcp?org=acme&ws=dev", "--transport", "http", "--header", "Authorization: Bearer " + w.served.Key},
		},
	}
	for name, tr := range transports {
		t.Run(name, func(t *testing.T) {
			run := func(args ...string) inspectorResult {
				t.Helper()
				out := inspector(t, tr.env, append(slices.Clone(tr.target), args...)...)
				var r inspectorResult
				if err := json.Unmarshal(out, &r); err != nil {
					t.Fatalf("%s: %v", out, err)
				}
				return r
			}
			list := run("--method", "tools/list")
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"list_runtimes", "create_runtime", "exec", "read_file", "write_file", "preview_url", "prompt"} {
				if !slices.Contains(names, want) {
					t.Fatalf("tools/list: %v lacks %s", names, want)
				}
			}
			marker := name + "-" + time.Now().Format("150405.000000000")
			ex := run("--method", "tools/call", "--tool-name", "exec", "--tool-arg", "runtime=box",
				`argv=["sh","-c","echo `+marker+` > /workspace/`+name+`.txt; cat /workspace/`+name+`.txt"]`)
			var exOut struct {
				ExitCode int    `json:"exit_code"`
				Stdout   string `json:"stdout"`
			}
			if err := json.Unmarshal(ex.StructuredContent, &exOut); err != nil || ex.IsError || exOut.ExitCode != 0 || exOut.Stdout != marker+"\n" {
				t.Fatalf("exec: %+v %+v (%v)", ex, exOut, err)
			}
			rf := run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "runtime="+w.runtimeID, "path=/workspace/"+name+".txt")
			var fc struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(rf.StructuredContent, &fc); err != nil || rf.IsError || fc.Content != marker+"\n" {
				t.Fatalf("read_file: %+v %+v (%v)", rf, fc, err)
			}
			bad := run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "runtime=box", "path=/workspace/missing")
			if !bad.IsError || len(bad.Content) == 0 || !strings.HasPrefix(bad.Content[0].Text, "file_not_found: ") {
				t.Fatalf("read_file of a missing file: %+v", bad)
			}
		})
	}
}
