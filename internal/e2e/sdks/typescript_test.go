package sdks

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// The org, workspace and viewer TestTypeScriptSDK prepares for the
// SDK's tests.
const (
	tsOrg          = "ts-sdk"
	tsWorkspace    = "default"
	tsViewer       = "viewer@ts-sdk.example"
	tsHarnessEnv   = "ANTHROPIC_API_KEY"
	tsHarnessValue = "sk-test-not-real"
)

// TestTypeScriptSDK runs sdk/typescript's tests (node's test runner)
// against a live paddock on the real Docker engine: the package is built
// as users get it (npm run build) and its tests import it by its name.
// They cover orgs, workspaces, projects and a runtime's life, exec
// (collected, streamed, stdin, background, attach, signal), files, a
// terminal, a prompt to the test image's harness stand-in, credits, keys,
// snapshots, evaluation tasks, and errors (404, 401, a viewer's 403).
func TestTypeScriptSDK(t *testing.T) {
	dir := tsPackage(t)
	node := testenv.NodeBin(t)
	s := testenv.Serve(t, testenv.ServeOptions{Args: []string{"--instance", tsInstance}})
	viewerKey := prepareTSOrg(t, s)
	prepareTSInstance(t, s)
	env := append(os.Environ(),
		"PATH="+node+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PADDOCK_URL="+s.URL,
		"PADDOCK_API_KEY="+s.Key,
		"PADDOCK_ORG="+tsOrg,
		"PADDOCK_WORKSPACE="+tsWorkspace,
		"PADDOCK_VIEWER_KEY="+viewerKey,
		"PADDOCK_VIEWER_MEMBER="+tsViewer,
		"PADDOCK_HARNESS_SECRET=anthropic",
	)
	runNPM(t, dir, node, env, "build")
	if err := runNPMErr(t, dir, node, env, "test"); err != nil {
		t.Fatalf("the TypeScript SDK's tests failed: %v\nserver log:\n%s", err, s.Logs)
	}
	// The README's examples, against the same server, one runtime
	// running at a time.
	deleteProject(t, s, tsOrg, tsWorkspace, "ts-main")
	blocks := readmeSDKBlocks(t)
	prepareReadmeOrg(t, s)
	t.Run("readme-go", func(t *testing.T) { testReadmeGo(t, s, blocks["go"]) })
	t.Run("readme-ts", func(t *testing.T) { testReadmeTS(t, s, dir, node, env, blocks["ts"]) })
	t.Run("readme-python", func(t *testing.T) { testReadmePython(t, s, blocks["python"]) })
	t.Run("browser", func(t *testing.T) { testBrowserBundle(t, s, dir) })
}

// tsPackage is sdk/typescript, its packages installed
// (scripts/js-deps.sh); without them the test skips, or fails in CI.
func tsPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "sdk", "typescript")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PADDOCK_REQUIRE_DOCKER") != "" {
			t.Fatal("sdk/typescript's packages are not installed: run scripts/js-deps.sh")
		}
		t.Skip("sdk/typescript's packages are not installed (scripts/js-deps.sh installs them)")
	}
	return dir
}

// prepareTSOrg makes the org and workspace the tests use, with a secret
// the harness stand-in takes as its model credential, a grant of 1000
// credits, and a viewer; it returns the viewer's key.
func prepareTSOrg(t *testing.T, s *testenv.Served) string {
	t.Helper()
	ctx := t.Context()
	c, err := pc.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: tsOrg}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, tsOrg, pc.CreateWorkspaceRequest{Name: tsWorkspace}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSecret(ctx, tsOrg, tsWorkspace, pc.CreateSecretRequest{Name: "anthropic", Env: tsHarnessEnv, Value: tsHarnessValue}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrantCredits(ctx, tsOrg, pc.GrantCreditsRequest{Amount: 1000, IdempotencyKey: "ts-sdk-grant", Note: "ts-sdk grant"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddOrgMember(ctx, tsOrg, pc.AddOrgMemberRequest{Member: tsViewer, Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddMember(ctx, tsOrg, tsWorkspace, pc.AddMemberRequest{Member: tsViewer}); err != nil {
		t.Fatal(err)
	}
	k, err := c.CreateKey(ctx, tsOrg, pc.CreateKeyRequest{Member: tsViewer, Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// runNPM runs `npm run script` in dir and fails the test if it fails.
func runNPM(t *testing.T, dir, node string, env []string, script string) {
	t.Helper()
	if err := runNPMErr(t, dir, node, env, script); err != nil {
		t.Fatalf("npm run %s: %v", script, err)
	}
}

// runNPMErr runs `npm run script` in dir with node's npm, its output
// streamed to the test's log line by line as it comes.
func runNPMErr(t *testing.T, dir, node string, env []string, script string) error {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(node, "npm"), "run", "--silent", script)
	cmd.Dir, cmd.Env = dir, env
	logs := &lineLog{t: t} // python_test.go's
	cmd.Stdout, cmd.Stderr = logs, logs
	err := cmd.Run()
	logs.flush()
	return err
}
