package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// The SSH gateway, driven by the real OpenSSH client binaries (ssh, scp,
// sftp from openssh-client) against a runtime on Docker.

// sshFixture is a gateway on a loopback port in front of a running
// Docker-backed runtime, and what OpenSSH needs to reach it: a member's
// key, and a known_hosts file holding the gateway's host key.
type sshFixture struct {
	*sandbox
	gw         *sshgw.Gateway
	port       string
	dir        string
	knownHosts string
	hostKey    ssh.Signer
	user       string // the SSH user name: the runtime's 12 hex characters
	org        store.Org
	ws         store.Workspace
	key        string // the member's private key file
	keyRec     store.SSHKey
}

// requireOpenSSH skips (or, where real components are required, fails)
// without the OpenSSH client binaries.
func requireOpenSSH(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"ssh", "scp", "sftp"} {
		if _, err := exec.LookPath(bin); err != nil {
			msg := fmt.Sprintf("%s not found: install openssh-client", bin)
			if os.Getenv("PADDOCK_REQUIRE_DOCKER") != "" || os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

func newSSHFixture(t testing.TB) *sshFixture {
	t.Helper()
	requireOpenSSH(t)
	s := defaultSandbox(t)
	ctx := context.Background()
	f := &sshFixture{sandbox: s, dir: t.TempDir(), user: sshgw.UserName(s.rid)}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if f.hostKey, err = ssh.NewSignerFromKey(priv); err != nil {
		t.Fatal(err)
	}
	f.gw = sshgw.New(sshgw.Config{
		Runtimes: s.env.Runtimes, Access: s.env.Access, HostKey: f.hostKey,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Recheck: 200 * time.Millisecond,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- f.gw.Serve(ln) }()
	t.Cleanup(func() {
		f.gw.Close()
		if err := <-served; !errors.Is(err, sshgw.ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	_, f.port, _ = net.SplitHostPort(ln.Addr().String())
	f.knownHosts = filepath.Join(f.dir, "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%s %s\n", f.port, sshgw.AuthorizedKey(f.hostKey.PublicKey()))
	if err := os.WriteFile(f.knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.org, err = s.env.Store.GetOrgByName(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if f.ws, err = s.env.Store.GetWorkspaceByName(ctx, f.org.ID, "dev"); err != nil {
		t.Fatal(err)
	}
	f.key, f.keyRec = f.member(t, "member", true, "")
	return f
}

// member makes a user with role in acme (none for ""), a member of
// workspace dev if inWS, and an SSH key for it scoped to scopeOrg (none
// for ""); it returns the private key's file and the key's record.
func (f *sshFixture) member(t testing.TB, role string, inWS bool, scopeOrg string) (string, store.SSHKey) {
	t.Helper()
	ctx := context.Background()
	st := f.env.Store
	u := f.newUser(t, role, inWS)
	file, pub := f.newKey(t)
	norm, fp, _, err := sshgw.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	k := store.SSHKey{ID: uuid.NewString(), UserID: u.ID, Name: "test", Fingerprint: fp, PublicKey: norm, CreatedAt: time.Now()}
	if scopeOrg != "" {
		k.OrgID, k.Role = scopeOrg, "member"
	}
	if err := st.CreateSSHKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	return file, k
}

// newUser makes a user with role in acme (none for ""), a member of
// workspace dev if inWS.
func (f *sshFixture) newUser(t testing.TB, role string, inWS bool) store.User {
	t.Helper()
	ctx := context.Background()
	st := f.env.Store
	u := store.User{ID: uuid.NewString(), Email: uuid.NewString()[:8] + "@example.com", CreatedAt: time.Now()}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if err := st.AddOrgMember(ctx, store.OrgMember{ID: uuid.NewString(), OrgID: f.org.ID, UserID: u.ID, Role: role, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if inWS {
		if err := st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: f.org.ID, WorkspaceID: f.ws.ID, UserID: u.ID, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// newKey writes a new ed25519 private key (0600) and returns its file and
// public key.
func (f *sshFixture) newKey(t testing.TB) (string, string) {
	t.Helper()
	priv, pub, err := pc.GenerateSSHKey("e2e")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(f.dir, "id-"+uuid.NewString()[:8])
	if err := os.WriteFile(file, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, pub
}

// opts are the options every OpenSSH command here takes: no user
// configuration, the gateway's host key pinned, no prompts, only key.
func (f *sshFixture) opts(key string) []string {
	return []string{
		"-F", "/dev/null",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + f.knownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes",
		"-o", "IdentitiesOnly=yes",
		"-o", "LogLevel=ERROR",
		"-i", key,
	}
}

// result is how an OpenSSH command ended.
type result struct {
	stdout, stderr string
	code           int
}

// run runs an OpenSSH binary with stdin and returns how it ended.
func (f *sshFixture) run(t testing.TB, stdin io.Reader, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = f.dir
	cmd.Env = []string{"HOME=" + f.dir, "PATH=" + os.Getenv("PATH"), "TERM=xterm-e2e"}
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return result{out.String(), errb.String(), code}
}

// ssh runs `ssh` as user with key, and args after the destination.
func (f *sshFixture) ssh(t testing.TB, key, user string, stdin io.Reader, args ...string) result {
	t.Helper()
	a := append(f.opts(key), "-p", f.port, user+"@127.0.0.1")
	return f.run(t, stdin, "ssh", append(a, args...)...)
}

// dest is a destination for scp and sftp: the member's, on the runtime.
func (f *sshFixture) dest() string { return f.user + "@127.0.0.1" }

func TestSSH(t *testing.T) {
	f := newSSHFixture(t)

	t.Run("exec", func(t *testing.T) {
		r := f.ssh(t, f.key, f.user, nil, "echo hi; echo oops >&2; exit 3")
		if r.stdout != "hi\n" || r.stderr != "oops\n" || r.code != 3 {
			t.Fatalf("got %+v, want stdout hi, stderr oops, exit 3", r)
		}
	})

	t.Run("exec by whole runtime id", func(t *testing.T) {
		r := f.ssh(t, f.key, f.rid, nil, "pwd")
		if r.stdout != "/workspace\n" || r.code != 0 {
			t.Fatalf("got %+v", r)
		}
	})

	t.Run("stdin", func(t *testing.T) {
		in := make([]byte, 300<<10)
		_, _ = rand.Read(in)
		r := f.ssh(t, f.key, f.user, bytes.NewReader(in), "cat")
		if r.code != 0 || r.stdout != string(in) {
			t.Fatalf("cat returned %d bytes (exit %d, stderr %q), want the %d sent", len(r.stdout), r.code, r.stderr, len(in))
		}
	})

	t.Run("pty", func(t *testing.T) {
		r := f.ssh(t, f.key, f.user, strings.NewReader("stty size; echo term=$TERM; exit 7\n"), "-tt")
		if r.code != 7 {
			t.Fatalf("exit %d, want 7; output %q %q", r.code, r.stdout, r.stderr)
		}
		t.Logf("terminal output %q", r.stdout)
		if !regexp.MustCompile(`(?m)^\d+ \d+\r?$`).MatchString(r.stdout) || !strings.Contains(r.stdout, "term=xterm-e2e") {
			t.Fatalf("output %q lacks the terminal's size and TERM", r.stdout)
		}
	})

	t.Run("shell without pty", func(t *testing.T) {
		r := f.ssh(t, f.key, f.user, strings.NewReader("echo from-shell; exit 4\n"), "-T")
		if r.stdout != "from-shell\n" || r.code != 4 {
			t.Fatalf("got %+v", r)
		}
	})

	t.Run("exit signal", func(t *testing.T) {
		// OpenSSH's client reports a signal as 255; a Go client sees which.
		sess, err := f.goClient(t).NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		var ee *ssh.ExitError
		if err := sess.Run("kill -KILL $$"); !errors.As(err, &ee) || ee.Signal() != "KILL" {
			t.Fatalf("Run = %v, want an exit by signal KILL", err)
		}
	})

	t.Run("pty resized", func(t *testing.T) {
		sess, err := f.goClient(t).NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		if err := sess.RequestPty("vt100", 40, 100, nil); err != nil {
			t.Fatal(err)
		}
		in, err := sess.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		var seen bytes.Buffer
		await := func(want string) {
			t.Helper()
			buf := make([]byte, 4096)
			for !strings.Contains(seen.String(), want) {
				n, err := out.Read(buf)
				seen.Write(buf[:n])
				if err != nil {
					t.Fatalf("waiting for %q: %v; read %q", want, err, seen.String())
				}
			}
		}
		fmt.Fprint(in, "stty size\n")
		await("40 100")
		if err := sess.WindowChange(50, 132); err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(in, "stty size; exit\n")
		await("50 132")
		if err := sess.Wait(); err != nil {
			t.Fatalf("the shell ended with %v", err)
		}
	})

	t.Run("scp", func(t *testing.T) {
		data := make([]byte, 5<<20)
		_, _ = rand.Read(data)
		local := filepath.Join(f.dir, "big.bin")
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
		scp := func(args ...string) {
			t.Helper()
			if r := f.run(t, nil, "scp", append(append(f.opts(f.key), "-P", f.port), args...)...); r.code != 0 {
				t.Fatalf("scp %q: exit %d: %s", args, r.code, r.stderr)
			}
		}
		scp(local, f.dest()+":/workspace/big.bin")
		back := filepath.Join(f.dir, "back.bin")
		scp(f.dest()+":big.bin", back) // relative to the workspace
		if got := mustRead(t, back); !bytes.Equal(got, data) {
			t.Fatalf("the file came back with %d bytes, not the %d sent", len(got), len(data))
		}
		if r := f.ssh(t, f.key, f.user, nil, "wc -c < /workspace/big.bin"); strings.TrimSpace(r.stdout) != strconv.Itoa(len(data)) {
			t.Fatalf("in the sandbox: %q", r.stdout)
		}

		// -p keeps the mode and the modification time.
		small := filepath.Join(f.dir, "kept.txt")
		if err := os.WriteFile(small, []byte("kept\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(small, 0o640); err != nil {
			t.Fatal(err)
		}
		mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := os.Chtimes(small, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		scp("-p", small, f.dest()+":/workspace/kept.txt")
		want := fmt.Sprintf("640 %d", mtime.Unix())
		if r := f.ssh(t, f.key, f.user, nil, "stat -c '%a %Y' /workspace/kept.txt"); strings.TrimSpace(r.stdout) != want {
			t.Fatalf("scp -p: mode and mtime %q, want %q (%s)", r.stdout, want, r.stderr)
		}
	})

	t.Run("sftp batch", func(t *testing.T) {
		local := filepath.Join(f.dir, "note.txt")
		if err := os.WriteFile(local, []byte("a note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		batch := filepath.Join(f.dir, "batch")
		script := strings.Join([]string{
			"mkdir /workspace/box",
			"put note.txt /workspace/box/note.txt",
			"ls -l /workspace/box",
			"rename /workspace/box/note.txt /workspace/box/moved.txt",
			"get /workspace/box/moved.txt got.txt",
			"rm /workspace/box/moved.txt",
			"rmdir /workspace/box",
		}, "\n") + "\n"
		if err := os.WriteFile(batch, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		r := f.run(t, nil, "sftp", append(f.opts(f.key), "-P", f.port, "-b", batch, f.dest())...)
		if r.code != 0 {
			t.Fatalf("sftp: exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
		if !regexp.MustCompile(`-rw-r--r--.* 7 .*note\.txt`).MatchString(r.stdout) {
			t.Fatalf("ls -l did not show the file put: %q", r.stdout)
		}
		if got := string(mustRead(t, filepath.Join(f.dir, "got.txt"))); got != "a note\n" {
			t.Fatalf("got %q", got)
		}
		if r := f.ssh(t, f.key, f.user, nil, "test -e /workspace/box"); r.code != 1 {
			t.Fatalf("the directory is still there (test -e: %d)", r.code)
		}
	})

	t.Run("local forward", func(t *testing.T) {
		if r := f.ssh(t, f.key, f.user, nil, "mkdir -p www && echo hello-tunnel > www/index.html"); r.code != 0 {
			t.Fatalf("%+v", r)
		}
		ctx := bounded(t)
		if _, err := f.sdk.Exec(ctx, "acme", "dev", f.rid, pc.ExecRequest{
			Argv: []string{"httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/workspace/www"}, Background: true,
		}); err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(freePort(t))
		tunnel := exec.Command("ssh", append(f.opts(f.key), "-N", "-o", "ExitOnForwardFailure=yes",
			"-L", "127.0.0.1:"+port+":localhost:8080", "-p", f.port, f.dest())...)
		tunnel.Env = []string{"HOME=" + f.dir, "PATH=" + os.Getenv("PATH")}
		var stderr bytes.Buffer
		tunnel.Stderr = &stderr
		if err := tunnel.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = tunnel.Process.Kill()
			_ = tunnel.Wait()
		}()
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		var body string
		testenv.WaitFor(t, "a page through the tunnel", func() bool {
			resp, err := hc.Get("http://127.0.0.1:" + port + "/index.html")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == http.StatusOK
		})
		if body != "hello-tunnel\n" {
			t.Fatalf("body %q (ssh: %s)", body, stderr.String())
		}

		// Other hosts are refused: the gateway is no way onto any network.
		if r := f.ssh(t, f.key, f.user, nil, "-W", "192.0.2.1:80"); r.code != 255 {
			t.Fatalf("a forward to another host: %+v", r)
		}
		c := f.goClient(t)
		var oe *ssh.OpenChannelError
		if _, err := c.Dial("tcp", "192.0.2.1:80"); !errors.As(err, &oe) || oe.Reason != ssh.Prohibited {
			t.Fatalf("a forward to another host: %v, want it prohibited", err)
		}
	})

	t.Run("refused alike", func(t *testing.T) {
		other := f.orgNamed(t, "other")
		outsider, _ := f.member(t, "", false, "")
		viewer, _ := f.member(t, "viewer", true, "")
		noWorkspace, _ := f.member(t, "member", false, "")
		scopedElsewhere, _ := f.member(t, "member", true, other.ID)
		unregistered, _ := f.newKey(t)
		cases := []struct {
			name, key, user string
		}{
			{"user not in the org", outsider, f.user},
			{"viewer", viewer, f.user},
			{"member outside the workspace", noWorkspace, f.user},
			{"key scoped to another org", scopedElsewhere, f.user},
			{"unregistered key", unregistered, f.user},
			{"no such runtime", f.key, "000000000000"},
			{"not a runtime name", f.key, "root"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := f.ssh(t, tc.key, tc.user, nil, "true")
				if r.code != 255 || !strings.Contains(r.stderr, "Permission denied (publickey)") {
					t.Fatalf("got %+v, want the plain authentication failure", r)
				}
			})
		}
	})

	t.Run("deleting the key ends its connections", func(t *testing.T) {
		file, k := f.member(t, "member", true, "")
		ctx := bounded(t)
		cmd := exec.CommandContext(ctx, "ssh", append(f.opts(file), "-p", f.port, f.dest(), "echo ready; sleep 300")...)
		cmd.Env = []string{"HOME=" + f.dir, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
			t.Fatalf("read %q: %v", buf, err)
		}
		if err := f.env.Store.DeleteSSHKey(ctx, k.UserID, k.ID); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the connection outlived its key")
		}
	})

	// Last: they pause the runtime, then reset it.
	t.Run("wakes a paused runtime", func(t *testing.T) {
		var rt pc.Runtime
		f.env.Must(t, 200, "POST", f.rtPath+"/pause", nil).Decode(t, &rt)
		if rt.Status != "paused" {
			t.Fatalf("runtime is %s after pause", rt.Status)
		}
		if r := f.ssh(t, f.key, f.user, nil, "true"); r.code != 0 {
			t.Fatalf("ssh true on a paused runtime: %+v", r)
		}
		f.env.Must(t, 200, "GET", f.rtPath, nil).Decode(t, &rt)
		if rt.Status != "running" {
			t.Fatalf("runtime is %s after ssh, want running", rt.Status)
		}
	})

	t.Run("a runtime that is not running says so", func(t *testing.T) {
		f.env.Must(t, 200, "POST", f.rtPath+"/reset", nil)
		r := f.ssh(t, f.key, f.user, nil, "true")
		if r.code != 255 || !strings.Contains(r.stderr, "(runtime_not_running)") {
			t.Fatalf("ssh true on an idle runtime: %+v", r)
		}
	})
}

// TestSSHCLI drives `paddock ssh`, `paddock ssh-config` and `paddock
// ssh-key` as a member with an API key and nothing else: the CLI makes its
// key pair, registers it, pins the gateway's host key and runs the
// system's ssh. The API serves the gateway's address and host key.
func TestSSHCLI(t *testing.T) {
	f := newSSHFixture(t)
	ctx := bounded(t)
	reg := provider.NewRegistry()
	reg.Register(f.env.Provider)
	h := api.New(api.Config{Access: f.env.Access, Tenancy: tenancy.New(tenancy.Config{Store: f.env.Store}), Runtimes: f.env.Runtimes, Providers: reg})
	h.Mount(api.SSH(sshgw.NewInfo(net.JoinHostPort("127.0.0.1", f.port), f.hostKey.PublicKey())))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u := f.newUser(t, "member", true)
	key, _, err := auth.Keys{Store: f.env.Store, Now: time.Now}.Create(ctx,
		store.APIKey{Name: "laptop", Role: "member", OrgID: f.org.ID, UserID: u.ID, CreatedBy: "test"}, "")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := clitest.Env(srv.URL, key)
	env["HOME"], env["PADDOCK_ORG"], env["PADDOCK_WS"] = home, "acme", "dev"

	// paddock ssh: the command's output and exit code are ssh's.
	stdout, stderr, code := clitest.Run(t, env, "ssh", "p2", "--", "echo via-cli; exit 5")
	if stdout != "via-cli\n" || code != 5 {
		t.Fatalf("paddock ssh: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	dir := filepath.Join(home, ".config", "paddock", "ssh")
	if fi, err := os.Stat(filepath.Join(dir, "id_ed25519")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the private key: %v %v", fi, err)
	}
	if kh := string(mustRead(t, filepath.Join(dir, "known_hosts"))); !strings.Contains(kh, sshgw.AuthorizedKey(f.hostKey.PublicKey())) {
		t.Fatalf("known_hosts %q lacks the gateway's host key", kh)
	}

	// The key is registered once, confined as the API key is.
	clitest.MustRun(t, env, "ssh", "p2", "--", "true")
	keys := clitest.JSON[pc.List[pc.SSHKey]](t, env, "ssh-key", "ls")
	if len(keys.Items) != 1 || keys.Items[0].OrgID != f.org.ID || keys.Items[0].Role != "member" {
		t.Fatalf("keys %+v, want one scoped to acme as a member", keys.Items)
	}

	// ssh-config names the runtime for ssh (and VS Code).
	cfg := filepath.Join(home, "ssh_config")
	if err := os.WriteFile(cfg, []byte(clitest.MustRun(t, env, "ssh-config", "p2")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := f.run(t, nil, "ssh", "-F", cfg, "-o", "BatchMode=yes", "paddock-p2", "echo via-config"); r.stdout != "via-config\n" || r.code != 0 {
		t.Fatalf("ssh paddock-p2: %+v\nconfig:\n%s", r, mustRead(t, cfg))
	}

	// ssh-key add, ls, rm.
	_, pub := f.newKey(t)
	pubFile := filepath.Join(home, "extra.pub")
	if err := os.WriteFile(pubFile, []byte(pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	added := clitest.JSON[pc.SSHKey](t, env, "ssh-key", "add", pubFile, "--name", "extra")
	if added.Name != "extra" || !strings.HasPrefix(added.Fingerprint, "SHA256:") {
		t.Fatalf("added %+v", added)
	}
	if _, _, code := clitest.Run(t, env, "ssh-key", "add", pubFile); code == 0 {
		t.Fatal("the same key was added twice")
	}
	clitest.MustRun(t, env, "ssh-key", "rm", added.ID)
	if keys := clitest.JSON[pc.List[pc.SSHKey]](t, env, "ssh-key", "ls"); len(keys.Items) != 1 {
		t.Fatalf("keys after rm: %+v", keys.Items)
	}
}

// goClient is an x/crypto/ssh client of the member's, for what OpenSSH's
// client does not show.
func (f *sshFixture) goClient(t testing.TB) *ssh.Client {
	t.Helper()
	signer, err := ssh.ParsePrivateKey(mustRead(t, f.key))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", "127.0.0.1:"+f.port, &ssh.ClientConfig{
		User: f.user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(f.hostKey.PublicKey()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// orgNamed makes an org.
func (f *sshFixture) orgNamed(t testing.TB, name string) store.Org {
	t.Helper()
	var o pc.Org
	f.env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: name}).Decode(t, &o)
	return store.Org{ID: o.ID, Name: o.Name}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkSSHTrue runs `ssh host true` through the gateway (a whole
// OpenSSH connection: key exchange, authentication, a session, the agent's
// exec) and `docker exec <container> true` on the same container.
//
//	go test -run '^$' -bench SSHTrue ./internal/e2e
func BenchmarkSSHTrue(b *testing.B) {
	f := newSSHFixture(b)
	var sshMedian float64
	b.Run("ssh", func(b *testing.B) {
		sshMedian = testenv.BenchLatency(b, func() error {
			if r := f.ssh(b, f.key, f.user, nil, "true"); r.code != 0 {
				return fmt.Errorf("ssh true: %+v", r)
			}
			return nil
		})
	})
	b.Run("docker-exec", func(b *testing.B) {
		median := testenv.BenchLatency(b, func() error { return testenv.DockerExec(f.cid, "true") })
		if sshMedian > 0 {
			b.ReportMetric(median/sshMedian, "x-ssh")
		}
	})
}
