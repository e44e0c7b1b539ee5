package sdks

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestPythonSDK runs the Python SDK's own tests (sdk/python/tests, with
// Debian's pytest) against a live server on the real Docker engine: the
// sync and async clients' exec (one-shot and streamed), background
// processes, files (a few MB streamed each way), a runtime's lifecycle,
// keys, credits, prompts and sessions (the test image's stand-in
// harnesses), and the errors of a missing resource, a refused key and a
// viewer's writes. The tests make their own projects in an org and
// workspace made here, with a viewer's key and a harness secret.
func TestPythonSDK(t *testing.T) {
	requirePython(t)
	testenv.RequireDocker(t, testenv.TestImage)
	live := testenv.Serve(t, testenv.ServeOptions{Image: testenv.DefaultImage, Args: []string{"--instance", pyInstance}})
	org, ws := "pysdk", "default"
	viewer := pythonFleet(t, live, org, ws)
	prepareInstance(t, live, pyInstanceOrg)
	root := testenv.RepoRoot(t)
	env := append(os.Environ(),
		"PYTHONPATH="+filepath.Join(root, "sdk", "python"),
		"PYTHONDONTWRITEBYTECODE=1",
		"PADDOCK_REQUIRE_LIVE=1",
		"PADDOCK_URL="+live.URL,
		"PADDOCK_API_KEY="+live.Key,
		"PADDOCK_ORG="+org,
		"PADDOCK_WS="+ws,
		"PADDOCK_VIEWER_KEY="+viewer,
		"PADDOCK_VIEWER="+pythonViewer,
		// The test image's stand-in harness CLIs answer prompts offline,
		// given a model credential (any value) in ANTHROPIC_API_KEY.
		"PADDOCK_HARNESS_IMAGE="+testenv.TestImage,
		"PADDOCK_HARNESS_SECRET="+pythonHarnessSecret,
	)
	out := runPytest(t, filepath.Join(root, "sdk", "python"), env)
	if err := out.err; err != nil {
		t.Fatalf("pytest failed: %v\n%s\nserver logs:\n%s", err, pytestFailures(out.text), live.Logs)
	}
	// Every test ran: none was skipped for want of the server.
	summary := regexp.MustCompile(`(?m)^=+ (.*) in [0-9.]+s`).FindStringSubmatch(out.text)
	if summary == nil || !strings.Contains(summary[1], " passed") || strings.Contains(summary[1], "skipped") {
		t.Fatalf("pytest's summary is not all passed: %q", summary)
	}
}

// requirePython skips (or fails, in CI or with PADDOCK_REQUIRE_DOCKER)
// unless Debian's python3 has httpx, pytest and PyYAML.
func requirePython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(testenv.DebianPython, "-c", "import httpx, pytest, yaml").CombinedOutput()
	if err == nil {
		return
	}
	msg := testenv.DebianPython + " lacks httpx, pytest or PyYAML (apt-get install python3-httpx python3-pytest python3-yaml): " + strings.TrimSpace(string(out))
	if os.Getenv("CI") != "" || os.Getenv("PADDOCK_REQUIRE_DOCKER") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// pythonViewer is the viewer of the Python tests' org and workspace, and
// pythonHarnessSecret the workspace secret that gives the harnesses their
// (fake) model credential.
const (
	pythonViewer        = "viewer@python.example"
	pythonHarnessSecret = "anthropic"
)

// pythonFleet makes org with workspace ws, a viewer of both and the
// harness secret, and returns the viewer's key.
func pythonFleet(t *testing.T, live *testenv.Served, org, ws string) string {
	t.Helper()
	ctx := t.Context()
	sdk, err := pc.New(live.URL, live.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.CreateOrg(ctx, pc.CreateOrgRequest{Name: org}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.CreateWorkspace(ctx, org, pc.CreateWorkspaceRequest{Name: ws}); err != nil {
		t.Fatal(err)
	}
	secret := pc.CreateSecretRequest{Name: pythonHarnessSecret, Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"}
	if _, err := sdk.CreateSecret(ctx, org, ws, secret); err != nil {
		t.Fatal(err)
	}
	viewer := pythonViewer
	if _, err := sdk.AddOrgMember(ctx, org, pc.AddOrgMemberRequest{Member: viewer, Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.AddMember(ctx, org, ws, pc.AddMemberRequest{Member: viewer}); err != nil {
		t.Fatal(err)
	}
	k, err := sdk.CreateKey(ctx, org, pc.CreateKeyRequest{Member: viewer, Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// pytestRun is what a pytest run printed, and how it ended.
type pytestRun struct {
	text string
	err  error
}

// runPytest runs Debian's pytest on dir's tests with env. With go test
// -v its output streams to the test's log line by line as it comes;
// without, a failure says what pytest's failures were (pytestFailures),
// not the hundreds of lines of tests that passed before them.
func runPytest(t *testing.T, dir string, env []string) pytestRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.DebianPython, "-m", "pytest", "-v", "-rfEs", "-p", "no:cacheprovider", "tests")
	cmd.Dir = dir
	cmd.Env = env
	w := &lineLog{t: t, quiet: !testing.Verbose()}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	w.flush()
	return pytestRun{text: w.all.String(), err: err}
}

// pytestFailures is the part of pytest's output from its failures (or
// errors) on: the tracebacks and the short summary; all of it when it
// has neither.
func pytestFailures(out string) string {
	for _, head := range []string{"= FAILURES =", "= ERRORS ="} {
		if i := strings.Index(out, head); i >= 0 {
			return out[strings.LastIndexByte(out[:i], '\n')+1:]
		}
	}
	return out
}

// lineLog keeps all that is written and, unless quiet, writes each
// complete line to the test's log.
type lineLog struct {
	t     *testing.T
	quiet bool
	mu    sync.Mutex
	part  []byte
	all   bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(p)
	if l.quiet {
		return len(p), nil
	}
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Log(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
}

func (l *lineLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.t.Log(string(l.part))
		l.part = nil
	}
}
