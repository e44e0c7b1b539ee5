package capability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The memory capability's MCP server, driven through real MCP exchanges
// with the host's python3, as a harness drives it in a sandbox.

type mcpClient struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan string
	nextID int
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// startMemory runs the catalog's memory.py with its notes in store.
func startMemory(t *testing.T, store string) *mcpClient {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed (the default sandbox image has it): %v", err)
	}
	cmd := exec.Command(python, "catalog/memory/mcp/memory.py")
	cmd.Env = append(os.Environ(), "PADDOCK_MEMORY_FILE="+store)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &mcpClient{t: t, stdin: stdin, lines: make(chan string)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close() // EOF: the server exits
		for range c.lines {
			t.Error("output after the last exchange")
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("memory.py exited: %v", err)
		}
	})
	return c
}

func (c *mcpClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *mcpClient) receive() rpcResponse {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("memory.py closed its output")
		}
		var r rpcResponse
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			c.t.Fatalf("not JSON-RPC: %q: %v", line, err)
		}
		if r.JSONRPC != "2.0" {
			c.t.Fatalf("not JSON-RPC 2.0: %q", line)
		}
		return r
	case <-time.After(20 * time.Second): // a guard against a hung server, not a wait
		c.t.Fatal("no answer from memory.py in 20s")
	}
	panic("unreachable")
}

// call sends a request and returns its response, checking the id.
func (c *mcpClient) call(method string, params any) rpcResponse {
	c.t.Helper()
	c.nextID++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	c.send(string(msg))
	r := c.receive()
	if r.ID != float64(c.nextID) {
		c.t.Fatalf("%s: response id %v, want %d", method, r.ID, c.nextID)
	}
	return r
}

func (c *mcpClient) notify(method string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","method":"` + method + `"}`)
}

// tool calls a tool and returns its text and isError.
func (c *mcpClient) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	r := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if r.Error != nil {
		c.t.Fatalf("tools/call %s: %+v", name, r.Error)
	}
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		c.t.Fatalf("tools/call %s: result %s", name, r.Result)
	}
	return res.Content[0].Text, res.IsError
}

func (c *mcpClient) initialize(version string) map[string]any {
	c.t.Helper()
	r := c.call("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "paddock-test", "version": "0"},
	})
	var res map[string]any
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		c.t.Fatalf("initialize: %+v %s", r.Error, r.Result)
	}
	c.notify("notifications/initialized")
	return res
}

func TestMemoryServer(t *testing.T) {
	store := filepath.Join(t.TempDir(), "state", "memory.json")
	c := startMemory(t, store)

	init := c.initialize("2025-06-18")
	if init["protocolVersion"] != "2025-06-18" ||
		!reflect.DeepEqual(init["capabilities"], map[string]any{"tools": map[string]any{"listChanged": false}}) ||
		!reflect.DeepEqual(init["serverInfo"], map[string]any{"name": "paddock-memory", "version": "1.0.0"}) {
		t.Errorf("initialize: %v", init)
	}

	r := c.call("tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name        string
			InputSchema struct {
				Type     string
				Required []string
			}
		}
	}
	if err := json.Unmarshal(r.Result, &list); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range list.Tools {
		tools = append(tools, fmt.Sprint(tl.Name, tl.InputSchema.Required))
		if tl.InputSchema.Type != "object" {
			t.Errorf("%s: input schema type %q", tl.Name, tl.InputSchema.Type)
		}
	}
	if want := []string{"remember[key text]", "recall[query]", "list[]", "forget[key]"}; !reflect.DeepEqual(tools, want) {
		t.Errorf("tools %q, want %q", tools, want)
	}

	steps := []struct {
		tool    string
		args    map[string]any
		want    string // the text, or a part of it after "~"
		isError bool
	}{
		{"remember", map[string]any{"key": "build/test", "text": "Run `go test ./...`.", "tags": []string{"Build"}}, "Remembered 'build/test'.", false},
		{"remember", map[string]any{"key": "user/style", "text": "Prefers small commits.\nAnd short messages.", "tags": []string{"user", "style"}}, "Remembered 'user/style'.", false},
		{"remember", map[string]any{"key": "build/test", "text": "Run `go test ./...` (needs Docker).", "tags": []string{"build"}}, "Updated 'build/test'.", false},
		{"recall", map[string]any{"query": "docker TEST"}, "~## build/test [build] (updated ", false},
		{"recall", map[string]any{"query": "commits"}, "~Prefers small commits.\nAnd short messages.", false},
		{"recall", map[string]any{"query": "kubernetes"}, "No notes match 'kubernetes'.", false},
		{"list", map[string]any{}, "2 notes:\n- build/test [build]: Run `go test ./...` (needs Docker).\n- user/style [user, style]: Prefers small commits.", false},
		{"list", map[string]any{"tag": "User"}, "1 notes:\n- user/style [user, style]: Prefers small commits.", false},
		{"remember", map[string]any{"key": "x"}, "Error: text is required", true},
		{"remember", map[string]any{"key": "x", "text": "y", "tags": "z"}, "Error: tags must be a list of strings", true},
		{"recall", map[string]any{"query": "x", "limit": 0}, "Error: limit must be an integer from 1 to 100", true},
		{"forget", map[string]any{"key": "user/style"}, "Forgot 'user/style'.", false},
		{"forget", map[string]any{"key": "user/style"}, "Error: there is no note 'user/style'", true},
	}
	for _, s := range steps {
		text, isError := c.tool(s.tool, s.args)
		ok := text == s.want
		if part, contains := strings.CutPrefix(s.want, "~"); contains {
			ok = strings.Contains(text, part)
		}
		if !ok || isError != s.isError {
			t.Errorf("%s %v = %q (isError %v), want %q (isError %v)", s.tool, s.args, text, isError, s.want, s.isError)
		}
	}

	// Protocol errors are JSON-RPC errors; notifications get no answer.
	if r := c.call("tools/call", map[string]any{"name": "nope"}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("unknown tool: %+v", r)
	}
	if r := c.call("resources/list", nil); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown method: %+v", r)
	}
	c.notify("notifications/cancelled")
	if r := c.call("ping", nil); r.Error != nil || string(r.Result) != "{}" {
		t.Errorf("ping: %+v", r)
	}
	c.send("{not json")
	if r := c.receive(); r.Error == nil || r.Error.Code != -32700 || r.ID != nil {
		t.Errorf("parse error: %+v", r)
	}

	// The notes are in the file, as documented.
	var saved struct {
		Version int
		Notes   map[string]struct {
			Text, Created, Updated string
			Tags                   []string
		}
	}
	data, err := os.ReadFile(store)
	if err != nil || json.Unmarshal(data, &saved) != nil {
		t.Fatalf("store: %v\n%s", err, data)
	}
	if n := saved.Notes["build/test"]; saved.Version != 1 || len(saved.Notes) != 1 || n.Text != "Run `go test ./...` (needs Docker)." ||
		!reflect.DeepEqual(n.Tags, []string{"build"}) || n.Created == "" || n.Updated < n.Created {
		t.Errorf("store %s", data)
	}
}

// TestMemoryAcrossSessions runs two servers on one store, as two agent
// sessions would, then a third after both have gone.
func TestMemoryAcrossSessions(t *testing.T) {
	store := filepath.Join(t.TempDir(), "memory.json")
	a, b := startMemory(t, store), startMemory(t, store)
	a.initialize("2024-11-05")
	if got := b.initialize("1999-01-01")["protocolVersion"]; got != "2025-06-18" {
		t.Errorf("an unknown version is answered with %v, want the newest", got)
	}
	for i := range 5 {
		a.tool("remember", map[string]any{"key": fmt.Sprint("a", i), "text": "from a"})
		b.tool("remember", map[string]any{"key": fmt.Sprint("b", i), "text": "from b"})
	}
	// Each sees the other's notes: nothing is cached between calls.
	if text, _ := a.tool("list", map[string]any{}); !strings.HasPrefix(text, "10 notes:") {
		t.Errorf("a lists %q", text)
	}
	a.stdin.Close()
	b.stdin.Close()

	c := startMemory(t, store)
	c.initialize("2025-03-26")
	if text, _ := c.tool("recall", map[string]any{"query": "b4"}); !strings.Contains(text, "## b4 (updated ") || !strings.Contains(text, "from b") {
		t.Errorf("a new session recalls %q", text)
	}

	// A corrupt file is reported, never overwritten.
	if err := os.WriteFile(store, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isError := c.tool("remember", map[string]any{"key": "k", "text": "t"}); !isError || !strings.Contains(text, "is not valid JSON") {
		t.Errorf("remember over a corrupt file: %q, %v", text, isError)
	}
	if data, _ := os.ReadFile(store); string(data) != "{broken" {
		t.Errorf("the corrupt file was changed: %q", data)
	}
}
