package e2e

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSandboxUser: a sandbox's processes run as the unprivileged "user"
// (uid and gid 1000, home /home/user, owning the workspace) with no
// capabilities; an exec, a terminal or a whole runtime may ask for root,
// which has none either; files written through the API are the user's;
// the agent keeps only KILL, SETUID and SETGID.
func TestSandboxUser(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)
	runAs := func(t *testing.T, user string, argv ...string) string {
		t.Helper()
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: argv, User: user})
		if err != nil {
			t.Fatalf("exec %q as %q: %v", argv, user, err)
		}
		if res.Exit == nil || res.Exit.Code != 0 {
			t.Fatalf("exec %q as %q: exit %+v, stderr %q", argv, user, res.Exit, res.Stderr)
		}
		return string(res.Stdout)
	}
	const ids = `echo "$(id -u):$(id -g):$(id -G):$HOME:$(grep CapEff /proc/self/status | cut -f2)"`
	for _, c := range []struct{ user, want string }{
		{"", "1000:1000:1000:/home/user:0000000000000000\n"},
		{"user", "1000:1000:1000:/home/user:0000000000000000\n"},
		{"root", "0:0:0:/root:0000000000000000\n"},
	} {
		if got := runAs(t, c.user, "sh", "-c", ids); got != c.want {
			t.Errorf("as %q: uid:gid:groups:home:caps = %q, want %q", c.user, got, c.want)
		}
	}
	if got := s.run(t, "sh", "-c", "grep CapEff /proc/1/status | cut -f2"); got != "00000000000000e0\n" {
		t.Errorf("the agent's effective capabilities = %q, want KILL, SETGID and SETUID (00000000000000e0)", got)
	}
	_, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"true"}, User: "nobody"})
	var apiErr *pc.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "invalid_user" {
		t.Errorf("an unknown user: %v, want 400 invalid_user", err)
	}

	// The workspace and the home are the user's, and the same directory.
	if got := s.run(t, "sh", "-c", "touch /workspace/mine && stat -c %u:%g /workspace /home/user/mine"); got != "1000:1000\n1000:1000\n" {
		t.Errorf("owners of the workspace and a file the user made there: %q", got)
	}
	// Files the API writes are the user's too, through every file call.
	if _, err := s.sdk.WriteFile(ctx, "acme", "dev", s.rid, "/workspace/up.txt", strings.NewReader("hi"), pc.WriteFileOptions{}); err != nil {
		t.Fatal(err)
	}
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	_ = tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	_ = tw.WriteHeader(&tar.Header{Name: "d/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2, Uid: 0, Gid: 0})
	_, _ = io.WriteString(tw, "hi")
	_ = tw.Close()
	if _, err := s.sdk.UploadTar(ctx, "acme", "dev", s.rid, "/workspace/tree", &tarball); err != nil {
		t.Fatal(err)
	}
	if got := s.run(t, "stat", "-c", "%u:%g %n", "/workspace/up.txt", "/workspace/tree", "/workspace/tree/d", "/workspace/tree/d/f"); got != "1000:1000 /workspace/up.txt\n1000:1000 /workspace/tree\n1000:1000 /workspace/tree/d\n1000:1000 /workspace/tree/d/f\n" {
		t.Errorf("owners of what the API wrote:\n%s", got)
	}
	// The API may not write where the user may not.
	_, err = s.sdk.WriteFile(ctx, "acme", "dev", s.rid, "/root/x", strings.NewReader("hi"), pc.WriteFileOptions{})
	if !errors.Is(err, pc.ErrPermissionDenied) && !pc.IsCode(err, "read_only_filesystem") {
		t.Errorf("writing to root's home through the API: %v", err)
	}

	// A terminal runs as the runtime's user, or as root when asked.
	for user, want := range map[string]string{"": "1000", "root": "0"} {
		term, err := s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Argv: []string{"id", "-u"}, User: user})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(term)
		term.Close()
		if strings.TrimSpace(string(out)) != want {
			t.Errorf("terminal as %q: id -u = %q, want %s", user, out, want)
		}
	}
}

// TestRootRuntime: a runtime whose user is root runs its processes as uid
// 0, with its workspace root's, and may go back to the user per exec.
func TestRootRuntime(t *testing.T) {
	env, docker, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "rooted", Runtime: &pc.RuntimeConfig{MemoryMB: 128, PidsLimit: 64, User: "root"},
	}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	var rt pc.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Config.User != "root" {
		t.Fatalf("config user = %q, want root", rt.Config.User)
	}
	s := startSandbox(t, env, docker, p, rtPath)
	if got := s.run(t, "sh", "-c", "id -u; touch /workspace/x && stat -c %u /workspace /workspace/x"); got != "0\n0\n0\n" {
		t.Fatalf("a root runtime: %q", got)
	}
	res, err := s.sdk.Exec(bounded(t), "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"id", "-u"}, User: "user"})
	if err != nil || res.Exit == nil || string(res.Stdout) != "1000\n" {
		t.Fatalf("as user in a root runtime: %v %+v %q", err, res.Exit, res.Stdout)
	}
	env.Must(t, 400, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "nobody", Runtime: &pc.RuntimeConfig{User: "nobody"},
	})
}
