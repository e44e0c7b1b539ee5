package sdks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestE2BSDK runs the Node tests of internal/e2e/sdks/e2b, which drive the
// published e2b npm package (pinned in its package-lock.json) against a
// live server on the real Docker engine, with only the SDK's environment
// pointed at paddock: sandboxes, commands, terminals, files, errors, and
// a key of another org that reaches none of them.
func TestE2BSDK(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "internal", "e2e", "sdks", "e2b")
	requireNodeModules(t, dir, "e2b")
	node := testenv.NodeBin(t)
	// E2B users write anywhere: the sandboxes have writable roots, which
	// this Docker engine cannot bound.
	live := testenv.Serve(t, testenv.ServeOptions{Image: testenv.DefaultImage, Args: []string{"--writable-root-unbounded"}})
	sdk, err := pc.New(live.URL, live.Key)
	if err != nil {
		t.Fatal(err)
	}
	key := orgMemberKey(t, sdk, "e2b-home", "dev@home.example")
	foreign := orgMemberKey(t, sdk, "e2b-other", "dev@other.example")

	files, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in %s: %v", dir, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	// Two test files at a time, each test given minutes: CI machines have
	// two cores and each file starts its own sandboxes.
	args := append([]string{"--test", "--test-concurrency=2", "--test-timeout=600000", "--test-reporter=spec"}, files...)
	env := []string{
		"PATH=" + node + string(os.PathListSeparator) + os.Getenv("PATH"),
		"E2B_API_URL=" + live.URL + "/e2b",
		"E2B_SANDBOX_URL=" + live.URL + "/e2b",
		"E2B_API_KEY=" + key,
		"E2B_FOREIGN_API_KEY=" + foreign,
	}
	out, err := runLogged(t, dir, filepath.Join(node, "node"), args, env, 45*time.Minute)
	if err != nil {
		t.Fatalf("node --test: %v\n%s\nserver log:\n%s", err, failures(out), live.Logs)
	}
	// A test marked todo or skipped passes node's run; here nothing may.
	for _, kind := range []string{"todo", "skipped", "cancelled"} {
		m := regexp.MustCompile(`(?m)^ℹ ` + kind + ` (\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("node's summary has no %s count", kind)
		}
		if m[1] != "0" {
			t.Fatalf("node --test: %s tests were %s", m[1], kind)
		}
	}
	t.Run("README", func(t *testing.T) { testReadmeE2B(t, dir, node, env) })
}

// testReadmeE2B runs the JavaScript example of README.md's "Using the E2B
// SDK" section as it is, with the SDK's environment pointed at the test's
// server: it must exit 0 having printed the sandbox's uname.
func testReadmeE2B(t *testing.T, dir, node string, env []string) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Using the E2B SDK\n")
	if !ok {
		t.Fatal(`README.md has no "Using the E2B SDK" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```js\n")
	if !ok {
		t.Fatal(`README.md's "Using the E2B SDK" section has no js example`)
	}
	block, _, _ = strings.Cut(block, "\n```")
	// The example imports e2b: it runs beside the project's packages.
	tmp := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(tmp, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "example.mjs")
	if err := os.WriteFile(script, []byte(block+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runLogged(t, tmp, filepath.Join(node, "node"), []string{script}, env, 5*time.Minute)
	if err != nil {
		t.Fatalf("the README's example: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Linux ") {
		t.Fatalf("the README's example printed %q, not the sandbox's uname", out)
	}
}

// requireNodeModules fails (skips outside CI) unless scripts/js-deps.sh
// installed the project's packages.
func requireNodeModules(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			msg := fmt.Sprintf("%s has no node_modules/%s: run scripts/js-deps.sh", dir, p)
			if os.Getenv("CI") != "" || os.Getenv("PADDOCK_REQUIRE_DOCKER") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// orgMemberKey creates org with a workspace named default, adds member
// to both, and returns a member key of theirs narrowed to the workspace.
func orgMemberKey(t *testing.T, sdk *pc.Client, org, member string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := sdk.CreateOrg(ctx, pc.CreateOrgRequest{Name: org}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.CreateWorkspace(ctx, org, pc.CreateWorkspaceRequest{Name: "default"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.AddOrgMember(ctx, org, pc.AddOrgMemberRequest{Member: member, Role: "member"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.AddMember(ctx, org, "default", pc.AddMemberRequest{Member: member}); err != nil {
		t.Fatal(err)
	}
	k, err := sdk.CreateKey(ctx, org, pc.CreateKeyRequest{Member: member, Name: "e2b", Workspace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// runLogged runs bin with args in dir, its environment the test's plus
// env, streaming its output line by line into the test log as it comes;
// it answers the whole output. The process is killed (by its pid) if it
// outlives limit or the test.
func runLogged(t *testing.T, dir, bin string, args, env []string, limit time.Duration) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	w := &lineLog{t: t}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	w.flush()
	return w.all.String(), err
}

// failures is the part of node's spec report from its list of failing
// tests on (all of it when there is none).
func failures(out string) string {
	if i := strings.Index(out, "✖ failing tests:"); i >= 0 {
		return out[i:]
	}
	return out
}
