package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestCLITemplateBuild: paddock template build -f Dockerfile DIR, on
// Docker: the context honours .dockerignore, the progress is printed,
// the template uses the image and a runtime from it sees the files; a
// failing step exits non-zero with its code; template builds lists both.
func TestCLITemplateBuild(t *testing.T) {
	cleanup := removeOrgImages(t)
	srv, _, _, _ := dockerEnv(t)
	cleanup(srv, "acme")
	env := clitest.Env(srv.URL, srv.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/main.txt", "the app\n")
	write("secret.env", "TOKEN=not-for-the-image\n")
	write(".dockerignore", "secret.env\n")
	write("build/Dockerfile", "FROM "+testenv.TestImage+"\nCOPY . /opt/ctx\nRUN echo cli-built > /opt/run.txt\n")

	out := clitest.MustRun(t, env, "template", "build", "clitpl", "-f", filepath.Join(dir, "build", "Dockerfile"), dir)
	if !strings.Contains(out, "Step 1/") || !strings.Contains(out, "RUN echo cli-built") || !strings.Contains(out, "succeeded") {
		t.Fatalf("template build printed %q", out)
	}
	tpl := clitest.JSON[pc.Template](t, env, "template", "get", "clitpl", "-o", "json")
	if !strings.HasPrefix(tpl.Runtime.Image, "paddock-org/") {
		t.Fatalf("template %+v", tpl)
	}
	p := clitest.JSON[pc.Project](t, env, "project", "create", "from-cli", "--template", "clitpl", "--start", "--cpu", "0.5", "--memory", "128M", "-o", "json")
	got := clitest.MustRun(t, env, "exec", "from-cli", "--", "sh", "-c", "cat /opt/ctx/app/main.txt /opt/run.txt; ls /opt/ctx")
	if !strings.Contains(got, "the app\ncli-built\n") || strings.Contains(got, "secret.env") || p.RuntimeID == "" {
		t.Fatalf("the runtime from the built template sees %q", got)
	}

	write("Dockerfile", "FROM "+testenv.TestImage+"\nRUN echo failing; exit 7\n")
	_, errOut, code := clitest.Run(t, env, "template", "build", "broken", dir)
	if code == 0 || !strings.Contains(errOut, "build_step_failed") {
		t.Fatalf("a failing build: exit %d, %q", code, errOut)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "template", "builds"))
	if len(rows) != 3 || rows[1][2] != "succeeded" || rows[2][2] != "failed" {
		t.Fatalf("template builds: %v", rows)
	}
}
