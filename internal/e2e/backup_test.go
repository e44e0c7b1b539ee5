package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestBackupRestoreServes backs an installation up while its server
// serves a running runtime, restores the backup into a fresh data
// directory holding the same secrets key, starts a server on it, and
// execs into the runtime again: the same sandbox, with what was written
// in it before the backup.
func TestBackupRestoreServes(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789abcbac"
	data := t.TempDir()

	s := serve(t, bin, shim, data, instance, key)
	s.cli(t, bin, key, "org", "create", "acme")
	s.cli(t, bin, key, "workspace", "create", "dev", "--org", "acme")
	value := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(value, []byte("sk-kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cli(t, bin, key, "secret", "create", "tok", "--org", "acme", "--ws", "dev", "--env", "TOK", "--value-file", value)
	p := decodeJSON[pc.Project](t, s.cli(t, bin, key, "project", "create", "p1", "--org", "acme", "--ws", "dev", "--memory", "128", "-o", "json"))
	rt := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "start", p.RuntimeID, "--org", "acme", "--ws", "dev", "--secret", "tok", "-o", "json"))
	run := func(s *server, script string) string {
		return s.cli(t, bin, key, "exec", p.RuntimeID, "--org", "acme", "--ws", "dev", "--", "sh", "-c", script)
	}
	run(s, "echo before-backup > /tmp/marker")

	file := filepath.Join(t.TempDir(), "paddock.backup")
	admin(t, bin, "backup", "--data-dir", data, "-o", file)
	if got := run(s, "cat /tmp/marker"); got != "before-backup\n" {
		t.Fatalf("exec while the backup ran: %q", got)
	}
	s.stop(t)

	restored := t.TempDir()
	keyFile, err := os.ReadFile(filepath.Join(data, secrets.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, secrets.KeyFile), keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	admin(t, bin, "restore", "--data-dir", restored, file)

	s = serve(t, bin, shim, restored, instance, key)
	got := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "get", p.RuntimeID, "--org", "acme", "--ws", "dev", "-o", "json"))
	if got.Status != pc.RuntimeRunning || got.CurrentSandboxID != rt.CurrentSandboxID {
		t.Fatalf("runtime after the restore %+v, before %+v", got, rt)
	}
	if out := run(s, "cat /tmp/marker; echo $TOK"); out != "before-backup\nsk-kept\n" {
		t.Fatalf("exec after the restore: %q", out)
	}
	s.stop(t)
}

// admin runs `paddock admin <args>` and fails the test if it fails.
func admin(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"admin"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("paddock admin %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
