package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/capability"
)

// standinDir holds the stand-in binary and a symlink per CLI name, built
// once by TestMain.
var standinDir string

func TestMain(m *testing.M) {
	if err := buildStandin(); err != nil {
		fmt.Fprintln(os.Stderr, "building the stand-in:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(standinDir)
	os.Exit(code)
}

func buildStandin() error {
	dir, err := os.MkdirTemp("", "paddock-standin-")
	if err != nil {
		return err
	}
	standinDir = dir
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "standin")
	cmd := exec.Command(goBin, "build", "-o", bin, "./standin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	for _, h := range All() {
		if err := os.Symlink(bin, filepath.Join(dir, h.Binary)); err != nil {
			return err
		}
	}
	return nil
}

// sandbox is one harness's test world: a HOME, a workspace with files and
// an MCP configuration in every CLI's format.
type sandbox struct {
	h       *Harness
	home    string
	work    string
	capRoot string
	servers []capability.ResolvedMCPServer
}

func newSandbox(t *testing.T, h *Harness) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{h: h, home: filepath.Join(root, "home"), work: filepath.Join(root, "workspace")}
	s.capRoot = filepath.Join(s.work, ".paddock", "capabilities")
	for _, d := range []string{s.home, s.capRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"alpha.txt", "beta-notes.md"} {
		if err := os.WriteFile(filepath.Join(s.work, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.servers = []capability.ResolvedMCPServer{
		{MCPServer: capability.MCPServer{Name: "files", Type: "stdio", Command: "files-mcp", Args: []string{"--root", "/workspace"}, Env: map[string]string{"LOG": "1"}}, Capability: "fs"},
		{MCPServer: capability.MCPServer{Name: "search.web", Type: "http", URL: "http://127.0.0.1:9/mcp"}, Capability: "web"},
	}
	mcpJSON := `{"mcpServers":{"files":{"command":"files-mcp","args":["--root","/workspace"]},"search.web":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}`
	for path, content := range map[string]string{
		filepath.Join(s.capRoot, "mcp.json"):             mcpJSON,
		filepath.Join(s.capRoot, "gemini/settings.json"): `{"mcpServers":{"files":{"command":"files-mcp"},"search.web":{"httpUrl":"http://127.0.0.1:9/mcp"}}}`,
		filepath.Join(s.capRoot, "opencode.json"):        `{"$schema":"https://opencode.ai/config.json","mcp":{"files":{"type":"local","command":["files-mcp"]},"search.web":{"type":"remote","url":"http://127.0.0.1:9/mcp"}}}`,
		filepath.Join(s.capRoot, "codex/config.toml"):    "[mcp_servers.files]\ncommand = \"files-mcp\"\n",
		// Kimi Code reads MCP servers only from ~/.kimi-code/mcp.json (see
		// kimi.go): the file has to be there, beside the other CLIs' files.
		filepath.Join(s.home, ".kimi-code", "mcp.json"): mcpJSON,
	} {
		p := path
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *sandbox) invocation(prompt, resume string) Invocation {
	return Invocation{Prompt: prompt, ResumeID: resume, Workdir: s.work, CapRoot: s.capRoot, HasMCP: true, MCPServers: s.servers}
}

// turnRun is what one run of a CLI gave.
type turnRun struct {
	stdout, stderr string
	exitCode       int
	events         []Event
}

// run executes h.Command(inv) in the workspace with a clean environment:
// PATH, HOME, the command's env, the harness's first secret unless
// noSecret, and extraEnv; extraArgs go right after the binary (or its
// subcommand).
func (s *sandbox) run(t *testing.T, inv Invocation, noSecret bool, extraEnv []string, extraArgs ...string) turnRun {
	t.Helper()
	argv, env := s.h.Command(inv)
	if len(extraArgs) > 0 {
		// Extra flags go right after the binary, or after codex's and
		// opencode's subcommand.
		at := 1
		if s.h.Name == "codex" || s.h.Name == "opencode" {
			at = 2
		}
		argv = slices.Concat(argv[:at], extraArgs, argv[at:])
	}
	cmd := exec.Command(filepath.Join(standinDir, argv[0]), argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = s.work
	cmd.Env = []string{"PATH=" + standinDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + s.home}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if !noSecret {
		cmd.Env = append(cmd.Env, s.h.Secrets[0]+"=test-credential")
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := turnRun{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %v: %v", argv, err)
		}
		r.exitCode = exitErr.ExitCode()
	}
	p := s.h.NewParser()
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r.events = append(r.events, p.Feed(sc.Bytes())...)
	}
	r.events = append(r.events, p.Finish(r.exitCode, r.stderr)...)
	return r
}

func (r turnRun) types() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

func (r turnRun) done(t *testing.T) *TurnDone {
	t.Helper()
	last := r.events[len(r.events)-1]
	if last.Type != EventDone {
		t.Fatalf("last event is %s, want done; stdout:\n%s\nstderr:\n%s", last.Type, r.stdout, r.stderr)
	}
	return last.Done
}

func (r turnRun) firstOf(typ string) *Event {
	for i := range r.events {
		if r.events[i].Type == typ {
			return &r.events[i]
		}
	}
	return nil
}

func (r turnRun) messages() []string {
	var out []string
	for _, e := range r.events {
		if e.Type == EventMessage {
			out = append(out, e.Text)
		}
	}
	return out
}

func (r turnRun) describe() string {
	return fmt.Sprintf("exit %d\nevents %v\nstdout:\n%s\nstderr:\n%s", r.exitCode, r.types(), r.stdout, r.stderr)
}

// TestStandins drives every harness's Command, unchanged, through the
// stand-in CLI and its Parser.
func TestStandins(t *testing.T) {
	for _, h := range All() {
		t.Run(h.Name, func(t *testing.T) {
			s := newSandbox(t, h)
			const prompt = "list the files, please"

			first := s.run(t, s.invocation(prompt, ""), false, nil)
			checkStandinTurn(t, h, first, prompt)
			t.Run("mcp servers", func(t *testing.T) {
				if h.Name == "claude-code" {
					if !strings.Contains(first.stdout, `"mcp_servers":[{"name":"files","status":"failed"},{"name":"search.web","status":"pending"}]`) {
						t.Errorf("init event does not list the MCP servers:\n%s", first.stdout)
					}
					return
				}
				want := "mcp servers: files,search.web"
				if msgs := first.messages(); !strings.Contains(msgs[0], want) {
					t.Errorf("first message %q, want %q", msgs[0], want)
				}
			})
			t.Run("resume", func(t *testing.T) {
				id := first.done(t).HarnessSessionID
				second := s.run(t, s.invocation("and now the second one", id), false, nil)
				d := second.done(t)
				if d.ExitCode != 0 || d.HarnessSessionID != id {
					t.Fatalf("done %+v, want exit 0 in session %s\n%s", d, id, second.describe())
				}
				for _, want := range []string{"previous prompt: " + prompt, "turn 2"} {
					if !strings.Contains(d.Result, want) {
						t.Errorf("resumed result %q lacks %q", d.Result, want)
					}
				}
			})
			standinFailures(t, s, h)
		})
	}
}

// checkStandinTurn checks a first turn of h's stand-in: its events, in the
// common schema, as the real CLI's would be parsed.
func checkStandinTurn(t *testing.T, h *Harness, first turnRun, prompt string) {
	t.Run("turn", func(t *testing.T) {
		want := []string{"message", "tool_call", "tool_result", "message", "usage", "done"}
		if h.Name == "kimi" { // kimi's stream-json has no usage line
			want = []string{"message", "tool_call", "tool_result", "message", "done"}
		}
		if got := first.types(); !slices.Equal(got, want) {
			t.Fatalf("event types %v, want %v\n%s", got, want, first.describe())
		}
		if msgs := first.messages(); !strings.Contains(msgs[0], prompt) {
			t.Errorf("first message %q does not quote the prompt", msgs[0])
		}
		if res := first.firstOf(EventToolResult).Result; !strings.Contains(res.Output, "alpha.txt") || res.IsError {
			t.Errorf("tool result %+v does not list alpha.txt", res)
		}
		if call := first.firstOf(EventToolCall).Tool; call.ID != first.firstOf(EventToolResult).Result.ID {
			t.Errorf("tool call id %q and result id differ", call.ID)
		}
		d := first.done(t)
		if d.ExitCode != 0 || d.HarnessSessionID == "" {
			t.Errorf("done %+v, want exit 0 and a harness session id", d)
		}
		if msgs := first.messages(); d.Result != msgs[len(msgs)-1] || !strings.Contains(d.Result, "turn 1") {
			t.Errorf("done result %q, want the last message, turn 1", d.Result)
		}
	})
}

// standinFailures checks how h's stand-in fails as the real CLI does: a
// missing secret, an unknown resume id, a failure mid-turn, an unknown
// flag; and its version.
func standinFailures(t *testing.T, s *sandbox, h *Harness) {
	t.Run("missing secret", func(t *testing.T) {
		r := s.run(t, s.invocation("hello", ""), true, nil)
		e := r.firstOf(EventError)
		if e == nil {
			t.Fatalf("no error event\n%s", r.describe())
		}
		if e.Error.Code != CodeUnauthenticated || !strings.Contains(e.Error.Message, h.Secrets[0]) {
			t.Errorf("error %+v, want %s naming %s", e.Error, CodeUnauthenticated, h.Secrets[0])
		}
		if d := r.done(t); d.ExitCode == 0 {
			t.Errorf("done %+v, want a non-zero exit code", d)
		}
	})
	t.Run("unknown resume id", func(t *testing.T) {
		unknown := "0d9e8f7a-6b5c-4d3e-8f1a-0b9c8d7e6f5a"
		switch h.Name {
		case "opencode":
			unknown = "ses_0000000000000000000000000a"
		case "kimi":
			unknown = "session_" + unknown
		}
		r := s.run(t, s.invocation("hello again", unknown), false, nil)
		e := r.firstOf(EventError)
		if e == nil || e.Error.Code != CodeSessionNotFound {
			t.Fatalf("want a %s error\n%s", CodeSessionNotFound, r.describe())
		}
		if d := r.done(t); d.ExitCode == 0 {
			t.Errorf("done %+v, want a non-zero exit code", d)
		}
	})
	t.Run("fail mid-turn", func(t *testing.T) {
		r := s.run(t, s.invocation("please [fail] now", ""), false, nil)
		types := strings.Join(r.types(), ",")
		if !strings.Contains(types, "tool_result") || !strings.Contains(types, "error") {
			t.Errorf("events %s, want a tool result then an error\n%s", types, r.describe())
		}
		if strings.Index(types, "tool_result") > strings.Index(types, "error") {
			t.Errorf("events %s: the error comes before the tool result", types)
		}
		if d := r.done(t); d.ExitCode != 1 {
			t.Errorf("done %+v, want exit code 1", d)
		}
	})
	t.Run("unknown flag", func(t *testing.T) {
		r := s.run(t, s.invocation("hello", ""), false, nil, "--no-such-flag")
		wantExit := map[string]int{"claude-code": 1, "codex": 2, "gemini": 1, "opencode": 1, "kimi": 1}[h.Name]
		if r.exitCode != wantExit || !strings.Contains(r.stderr, "no-such-flag") {
			t.Errorf("exit %d (want %d), stderr %q", r.exitCode, wantExit, r.stderr)
		}
	})
	t.Run("version", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(standinDir, h.Binary), "--version")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if v := strings.TrimSpace(string(out)); !strings.Contains(v, h.WrittenAgainst) || !strings.HasSuffix(v, versionSuffixForTest) {
			t.Errorf("--version printed %q, want %s and%s", out, h.WrittenAgainst, versionSuffixForTest)
		}
	})
}

// TestKimiStandin checks what only Kimi Code does: sessions kept per
// working directory under ~/.kimi-code, and project-level MCP files skipped
// in a folder that was never trusted.
func TestKimiStandin(t *testing.T) {
	h, _ := Lookup("kimi")
	s := newSandbox(t, h)
	if err := os.WriteFile(filepath.Join(s.work, ".mcp.json"), []byte(`{"mcpServers":{"project-only":{"command":"x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	first := s.run(t, s.invocation("hello", ""), false, nil)
	id := first.done(t).HarnessSessionID

	t.Run("session layout", func(t *testing.T) {
		sum := sha256.Sum256([]byte(s.work))
		dir := filepath.Join(s.home, ".kimi-code", "sessions",
			"wd_workspace_"+hex.EncodeToString(sum[:])[:12], id)
		if !strings.HasPrefix(id, "session_") {
			t.Errorf("session id %q, want session_<uuid>", id)
		}
		for _, f := range []string{"state.json", "agents/main/wire.jsonl"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("session file: %v", err)
			}
		}
	})
	t.Run("untrusted project mcp", func(t *testing.T) {
		if msgs := first.messages(); !strings.HasSuffix(msgs[0], "\nmcp servers: files,search.web") {
			t.Errorf("first message %q loads more than the user-level servers", msgs[0])
		}
		if !strings.Contains(first.stderr, "skipped 1 project-level MCP server: project-only (stdio: x)") {
			t.Errorf("no trust warning on stderr:\n%s", first.stderr)
		}
	})
	t.Run("resume in another directory", func(t *testing.T) {
		other := *s
		other.work = t.TempDir()
		r := other.run(t, other.invocation("again", id), false, nil)
		e := r.firstOf(EventError)
		if e == nil || e.Error.Code != CodeFailed || !strings.Contains(e.Error.Message, "created under a different directory") {
			t.Fatalf("want a %s error about the directory\n%s", CodeFailed, r.describe())
		}
		if d := r.done(t); d.ExitCode != 1 {
			t.Errorf("done %+v, want exit code 1", d)
		}
	})
}

// TestCodexOpenAIKey: the pinned codex exec sends no credential when only
// OPENAI_API_KEY is set, to a loopback endpoint or to api.openai.com itself
// (testdata/codex/captured-0.169.0-openai-api-key*.requests), so it is not
// one of Codex's secrets, and the stand-in fails for want of one as the
// real CLI's request does.
func TestCodexOpenAIKey(t *testing.T) {
	h, _ := Lookup("codex")
	if slices.Contains(h.Secrets, "OPENAI_API_KEY") || !slices.Contains(h.Unread, "OPENAI_API_KEY") {
		t.Fatalf("codex takes its credential from %v and does not read %v", h.Secrets, h.Unread)
	}
	for _, name := range []string{"openai-api-key", "openai-api-key-default-endpoint"} {
		captured, err := os.ReadFile(filepath.Join("testdata", "codex", "captured-0.169.0-"+name+".requests"))
		if err != nil {
			t.Fatal(err)
		}
		_, withOpenAI, _ := strings.Cut(string(captured), "## OPENAI_API_KEY\n")
		withOpenAI, withCodex, _ := strings.Cut(withOpenAI, "## CODEX_API_KEY\n")
		if !strings.Contains(withOpenAI, "auth= None") || strings.Contains(withOpenAI, "Bearer") || !strings.Contains(withCodex, "auth= Bearer sk-codex-var") {
			t.Fatalf("%s: the capture does not show exec ignoring OPENAI_API_KEY:\n%s", name, captured)
		}
	}

	s := newSandbox(t, h)
	argv, env := h.Command(s.invocation("hello", ""))
	cmd := exec.Command(filepath.Join(standinDir, argv[0]), argv[1:]...)
	cmd.Dir = s.work
	cmd.Env = []string{"PATH=" + standinDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + s.home, "OPENAI_API_KEY=sk-test"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	exitErr, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("codex with only OPENAI_API_KEY: %v, want a failure\n%s", err, stdout.String())
	}
	e := firstError(parseOutput(h, stdout.String(), stderr.String(), exitErr.ExitCode()))
	if e == nil || e.Code != CodeUnauthenticated {
		t.Fatalf("error %+v, want %s\n%s", e, CodeUnauthenticated, stdout.String())
	}
}

// refusingProxy is an HTTP proxy on loopback that refuses every CONNECT
// with 403, as paddock's egress proxy refuses a host no rule allows, and
// sends each request line and credential it got.
func refusingProxy(t *testing.T) (string, <-chan string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 100)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Method + " " + r.Host + " " + r.Header.Get("Proxy-Authorization"):
		default:
		}
		http.Error(w, "paddock egress proxy: no allow rule matches", http.StatusForbidden)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://sandbox:secret@" + l.Addr().String(), got
}

// TestStandinsReachTheModel: with "[model]" in the prompt the stand-ins
// ask the proxy for a tunnel to their model's host, with the sandbox's
// proxy credentials, and fail as the real CLIs do when it is refused:
// OpenCode at once, Claude Code announcing its retries.
func TestStandinsReachTheModel(t *testing.T) {
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("sandbox:secret"))
	t.Run("opencode", func(t *testing.T) {
		h, _ := Lookup("opencode")
		s := newSandbox(t, h)
		proxy, got := refusingProxy(t)
		r := s.run(t, s.invocation("hello [model]", ""), false, []string{"HTTPS_PROXY=" + proxy})
		if want := "CONNECT api.anthropic.com:443 " + auth; len(got) == 0 || <-got != want {
			t.Errorf("the proxy did not see %q", want)
		}
		if e := r.firstOf(EventError); e == nil || !strings.Contains(e.Error.Message, "Forbidden") || r.exitCode != 1 {
			t.Errorf("want a Forbidden error and exit 1\n%s", r.describe())
		}
		// The error line is the real CLI's, field for field (the
		// proxy's headers aside).
		real, _ := captured(t, h, "proxy-refused")
		g, w := sameFields(t, r.stdout, real, "type")
		for _, k := range []string{"name", "data.message", "data.statusCode", "data.isRetryable", "data.responseBody", "data.metadata"} {
			if gv, wv := field(g[0]["error"], k), field(w[0]["error"], k); gv != wv {
				t.Errorf("error.%s: %s, the real CLI's %s", k, gv, wv)
			}
		}
	})
	t.Run("claude-code", func(t *testing.T) {
		h, _ := Lookup("claude-code")
		s := newSandbox(t, h)
		proxy, got := refusingProxy(t)
		argv, env := h.Command(s.invocation("hello [model]", ""))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(standinDir, argv[0]), argv[1:]...)
		cmd.Dir = s.work
		cmd.Env = []string{"HOME=" + s.home, "HTTPS_PROXY=" + proxy, "ANTHROPIC_API_KEY=test"}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		// It retries, saying so, until it is stopped: two retries are
		// enough to see.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		retries, first, before := 0, "", ""
		for retries < 2 && sc.Scan() {
			if strings.Contains(sc.Text(), `"subtype":"api_retry"`) {
				if retries == 0 {
					first = sc.Text()
				}
				retries++
			} else if retries == 0 {
				before += sc.Text() + "\n"
			}
		}
		cancel()
		if retries < 2 {
			t.Fatalf("%d api_retry lines before the output ended", retries)
		}
		if want := "CONNECT api.anthropic.com:443 " + auth; <-got != want {
			t.Errorf("the proxy did not see %q", want)
		}
		// What comes before the retries (the init line) and the retry line
		// are the real CLI's, field for field.
		real, _ := captured(t, h, "proxy-refused")
		i := strings.Index(real, `{"type":"system","subtype":"api_retry"`)
		sameFields(t, before, real[:i], "type", "subtype", "apiKeySource", "permissionMode")
		j := strings.IndexByte(real[i:], '\n')
		sameLines(t, first, real[i:i+j], "type", "subtype", "attempt", "max_retries", "error_status", "error")
	})
}
