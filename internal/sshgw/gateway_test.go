package sshgw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"

	"github.com/google/uuid"
	"github.com/pkg/sftp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// These tests run the gateway against a real agent (paddock-shim's server,
// in this process, on the host) behind the fake provider: everything but
// Docker. internal/e2e drives it with OpenSSH against Docker sandboxes.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// gateway is a gateway in front of one running runtime whose agent is
// in-process, and a member allowed into it.
type gateway struct {
	gw      *sshgw.Gateway
	addr    string
	hostKey ssh.PublicKey
	env     *servertest.Env
	rt      store.Runtime
	signer  ssh.Signer // the member's key
	user    string     // the runtime's SSH user name
	served  chan error
}

const maxFile = 1 << 20

func startGateway(t *testing.T, edit ...func(*sshgw.Config, store.Store)) *gateway {
	t.Helper()
	dial := shimtest.Serve(t)
	prov := fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})
	env := servertest.New(t, servertest.Options{Provider: prov})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	ctx := t.Context()
	rt, err := env.Store.GetRuntime(ctx, p.RuntimeID)
	if err != nil {
		t.Fatal(err)
	}

	hostKey, err := sshgw.LoadHostKey(filepath.Join(t.TempDir(), sshgw.HostKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{env: env, rt: rt, hostKey: hostKey.PublicKey(), user: sshgw.UserName(rt.ID), served: make(chan error, 1)}
	cfg := sshgw.Config{
		Runtimes: env.Runtimes, Access: env.Access, HostKey: hostKey, MaxFileBytes: maxFile,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, e := range edit {
		e(&cfg, env.Store)
	}
	g.gw = sshgw.New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	go func() { g.served <- g.gw.Serve(ln) }()
	t.Cleanup(g.close)
	g.signer = g.member(t, "member", rt.OrgID, rt.WorkspaceID)
	return g
}

func (g *gateway) close() {
	g.gw.Close()
	if g.served != nil {
		<-g.served
		g.served = nil
	}
}

// member makes a user with role in org, a member of workspace, with a
// registered key, and returns the key.
func (g *gateway) member(t *testing.T, role, org, workspace string) ssh.Signer {
	t.Helper()
	ctx := t.Context()
	st := g.env.Store
	u := store.User{ID: uuid.NewString(), Email: uuid.NewString()[:8] + "@example.com"}
	must(t, st.CreateUser(ctx, u))
	must(t, st.AddOrgMember(ctx, store.OrgMember{ID: uuid.NewString(), OrgID: org, UserID: u.ID, Role: role}))
	must(t, st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: org, WorkspaceID: workspace, UserID: u.ID}))
	priv, pub, err := pc.GenerateSSHKey("")
	must(t, err)
	signer, err := ssh.ParsePrivateKey(priv)
	must(t, err)
	norm, fp, _, err := sshgw.ParsePublicKey(pub)
	must(t, err)
	must(t, st.CreateSSHKey(ctx, store.SSHKey{ID: uuid.NewString(), UserID: u.ID, Fingerprint: fp, PublicKey: norm}))
	return signer
}

func (g *gateway) dial(user string, signer ssh.Signer) (*ssh.Client, error) {
	return ssh.Dial("tcp", g.addr, &ssh.ClientConfig{
		User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(g.hostKey),
		Timeout:         10 * time.Second,
	})
}

func (g *gateway) client(t *testing.T) *ssh.Client {
	t.Helper()
	c, err := g.dial(g.user, g.signer)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func (g *gateway) sftp(t *testing.T) *sftp.Client {
	t.Helper()
	c, err := sftp.NewClient(g.client(t))
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestExecAndAccess(t *testing.T) {
	g := startGateway(t)
	c := g.client(t)
	s, err := c.NewSession()
	must(t, err)
	var out, errOut bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errOut, strings.NewReader("piped")
	var ee *ssh.ExitError
	err = s.Run("cat; echo; echo oops >&2; exit 4")
	if !errors.As(err, &ee) || ee.ExitStatus() != 4 || out.String() != "piped\n" || errOut.String() != "oops\n" {
		t.Fatalf("run: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}

	// The runtime by other names; anything else, and other people, are
	// refused alike.
	for _, user := range []string{g.rt.ID, strings.ToUpper(g.user), strings.ReplaceAll(g.rt.ID, "-", "")[:20]} {
		c, err := g.dial(user, g.signer)
		if err != nil {
			t.Fatalf("as %q: %v", user, err)
		}
		c.Close()
	}
	viewer := g.member(t, "viewer", g.rt.OrgID, g.rt.WorkspaceID)
	for _, tc := range []struct {
		name, user string
		key        ssh.Signer
	}{
		{"short prefix", g.user[:11], g.signer},
		{"unknown runtime", "0123456789ab", g.signer},
		{"not hex", "root", g.signer},
		{"viewer", g.user, viewer},
	} {
		if c, err := g.dial(tc.user, tc.key); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
			if c != nil {
				c.Close()
			}
			t.Fatalf("%s: %v, want refused", tc.name, err)
		}
	}
}

// TestAmbiguousPrefix: a user name that matches two runtimes is refused.
func TestAmbiguousPrefix(t *testing.T) {
	g := startGateway(t)
	ctx := t.Context()
	for _, id := range []string{"abcdef01-2345-4000-8000-000000000001", "abcdef01-2345-4000-8000-000000000002"} {
		p := store.Project{ID: uuid.NewString(), OrgID: g.rt.OrgID, WorkspaceID: g.rt.WorkspaceID, Name: "p-" + id[len(id)-1:]}
		must(t, g.env.Store.CreateProject(ctx, p))
		rt := g.rt
		rt.ID, rt.ProjectID, rt.Status, rt.CurrentSandboxID = id, p.ID, store.RuntimeIdle, ""
		must(t, g.env.Store.CreateRuntime(ctx, rt))
	}
	if c, err := g.dial("abcdef012345", g.signer); err == nil {
		c.Close()
		t.Fatal("an ambiguous prefix was accepted")
	}
	c, err := g.dial("abcdef01234540008000000000000001", g.signer)
	must(t, err)
	defer c.Close()
	// That runtime is idle: the session says so and ends without a status.
	s, err := c.NewSession()
	must(t, err)
	var errOut bytes.Buffer
	s.Stderr = &errOut
	var missing *ssh.ExitMissingError
	if err := s.Run("true"); !errors.As(err, &missing) || !strings.Contains(errOut.String(), "(runtime_not_running)") {
		t.Fatalf("run on an idle runtime: %v, stderr %q", err, errOut.String())
	}
}

func TestSFTP(t *testing.T) {
	g := startGateway(t)
	c := g.sftp(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }

	// Writes in any order land whole on Close.
	f, err := c.Create(p("a.bin"))
	must(t, err)
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB
	for off := len(data) - 32768; ; off -= 32768 {
		off = max(off, 0)
		_, err := f.WriteAt(data[off:min(off+32768, len(data))], int64(off))
		must(t, err)
		if off == 0 {
			break
		}
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf("fstat of the open file: %v %v", fi, err)
	}
	if _, err := os.Stat(p("a.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file exists before Close: %v", err)
	}
	must(t, f.Close())
	if got, err := os.ReadFile(p("a.bin")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file as written: %d bytes, %v", len(got), err)
	}

	// Read back at any offset.
	f, err = c.Open(p("a.bin"))
	must(t, err)
	buf := make([]byte, 10)
	if _, err := f.ReadAt(buf, 300000); err != nil || string(buf) != string(data[300000:300010]) {
		t.Fatalf("ReadAt: %q %v", buf, err)
	}
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("read %d bytes: %v", len(all), err)
	}
	must(t, f.Close())

	// Opened without truncating, a file keeps what is not overwritten.
	f, err = c.OpenFile(p("a.bin"), os.O_WRONLY)
	must(t, err)
	_, err = f.WriteAt([]byte("XY"), 1)
	must(t, err)
	must(t, f.Close())
	if got, _ := os.ReadFile(p("a.bin")); len(got) != len(data) || string(got[:4]) != "0XY3" {
		t.Fatalf("after an update: %d bytes, %q", len(got), got[:4])
	}

	// open(2)'s flags.
	if _, err := c.OpenFile(p("a.bin"), os.O_WRONLY|os.O_CREATE|os.O_EXCL); err == nil {
		t.Fatal("O_EXCL opened an existing file")
	}
	if _, err := c.OpenFile(p("missing"), os.O_WRONLY); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening a missing file without O_CREATE: %v", err)
	}
	if _, err := c.Open(p("missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a missing file: %v", err)
	}

	// Attributes.
	must(t, c.Chmod(p("a.bin"), 0o600))
	must(t, c.Truncate(p("a.bin"), 5))
	mtime := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	must(t, c.Chtimes(p("a.bin"), mtime, mtime))
	if fi, err := os.Stat(p("a.bin")); err != nil || fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(mtime) || fi.Size() != 5 {
		t.Fatalf("after chmod, truncate, chtimes: %v %v", fi, err)
	}
	if fi, err := c.Stat(p("a.bin")); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 5 {
		t.Fatalf("stat: %v %v", fi, err)
	}

	// Attributes set on an open file come with its upload (scp -p).
	f, err = c.Create(p("p.txt"))
	must(t, err)
	_, err = f.Write([]byte("preserved"))
	must(t, err)
	must(t, f.Chmod(0o640))
	must(t, f.Close())
	if fi, err := os.Stat(p("p.txt")); err != nil || fi.Mode().Perm() != 0o640 || fi.Size() != 9 {
		t.Fatalf("a file chmodded while open: %v %v", fi, err)
	}

	// The tree.
	must(t, c.Mkdir(p("d")))
	must(t, c.Symlink("a.bin", p("link")))
	if target, err := c.ReadLink(p("link")); err != nil || target != "a.bin" {
		t.Fatalf("readlink: %q %v", target, err)
	}
	if fi, err := c.Lstat(p("link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("lstat: %v %v", fi, err)
	}
	if fi, err := c.Stat(p("link")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("stat through the link: %v %v", fi, err)
	}
	entries, err := c.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "a.bin,d,link,p.txt" {
		t.Fatalf("entries %q", names)
	}
	must(t, os.WriteFile(p("b.txt"), []byte("b"), 0o644))
	if err := c.Rename(p("b.txt"), p("a.bin")); err == nil {
		t.Fatal("rename replaced a file (SFTP v3 rename does not)")
	}
	must(t, c.PosixRename(p("b.txt"), p("a.bin")))
	if got, _ := os.ReadFile(p("a.bin")); string(got) != "b" {
		t.Fatalf("after posix-rename: %q", got)
	}
	if err := c.RemoveDirectory(p("a.bin")); err == nil {
		t.Fatal("rmdir removed a file")
	}
	must(t, c.Remove(p("link")))
	must(t, c.RemoveDirectory(p("d")))

	// A file over the limit is refused, both ways.
	f, err = c.Create(p("big"))
	must(t, err)
	if _, err := f.WriteAt([]byte("x"), maxFile); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("a write past the limit: %v", err)
	}
	must(t, f.Close())
	must(t, os.WriteFile(p("big"), make([]byte, maxFile+1), 0o644))
	if _, err := c.Open(p("big")); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("reading a file over the limit: %v", err)
	}
}

// TestSpoolSpace: the spool files of every session share one bound; a
// file closed gives its space back.
func TestSpoolSpace(t *testing.T) {
	g := startGateway(t, func(c *sshgw.Config, _ store.Store) { c.MaxSpoolBytes = maxFile + maxFile/2 })
	c := g.sftp(t)
	dir := t.TempDir()
	a, err := c.Create(filepath.Join(dir, "a"))
	must(t, err)
	_, err = a.WriteAt([]byte("x"), maxFile-1)
	must(t, err)
	b, err := c.Create(filepath.Join(dir, "b"))
	must(t, err)
	if _, err := b.WriteAt([]byte("x"), maxFile-1); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("a write past the spool space: %v", err)
	}
	must(t, a.Close())
	_, err = b.WriteAt([]byte("x"), maxFile-1)
	must(t, err)
	must(t, b.Close())
	for _, name := range []string{"a", "b"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() != maxFile {
			t.Fatalf("%s: %v %v", name, fi, err)
		}
	}
}

// TestConnsPerUser: a user's connections are bounded; one that ends
// makes room for another.
func TestConnsPerUser(t *testing.T) {
	g := startGateway(t, func(c *sshgw.Config, _ store.Store) { c.MaxConnsPerUser = 2 })
	works := func(c *ssh.Client) bool {
		s, err := c.NewSession()
		if err != nil {
			return false
		}
		defer s.Close()
		return s.Run("true") == nil
	}
	first, second := g.client(t), g.client(t)
	if !works(first) || !works(second) {
		t.Fatal("the first two connections do not work")
	}
	if third, err := g.dial(g.user, g.signer); err == nil {
		ok := works(third)
		third.Close()
		if ok {
			t.Fatal("a third connection worked")
		}
	}
	first.Close()
	// Until the gateway has seen the first end.
	testenv.WaitFor(t, "room after a connection ended", func() bool {
		fourth, err := g.dial(g.user, g.signer)
		if err != nil {
			return false
		}
		defer fourth.Close()
		return works(fourth)
	})
}

// TestClose: closing the gateway ends the sessions open on it.
func TestClose(t *testing.T) {
	g := startGateway(t)
	c := g.client(t)
	s, err := c.NewSession()
	must(t, err)
	out, err := s.StdoutPipe()
	must(t, err)
	must(t, s.Start("echo started; sleep 60"))
	buf := make([]byte, 8)
	if _, err := io.ReadFull(out, buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	g.close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the session ended well")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session outlived the gateway")
	}
	if _, err := g.dial(g.user, g.signer); err == nil {
		t.Fatal("a closed gateway took a connection")
	}
}

// TestKeyRegisteredWithAnAPIKey: an SSH key an API key registered lives no
// longer than that API key.
func TestKeyRegisteredWithAnAPIKey(t *testing.T) {
	g := startGateway(t)
	ctx := t.Context()
	st := g.env.Store
	u := store.User{ID: uuid.NewString(), Email: "ci@example.com"}
	must(t, st.CreateUser(ctx, u))
	must(t, st.AddOrgMember(ctx, store.OrgMember{ID: uuid.NewString(), OrgID: g.rt.OrgID, UserID: u.ID, Role: "member", CreatedAt: time.Now().Add(-time.Hour)}))
	must(t, st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: g.rt.OrgID, WorkspaceID: g.rt.WorkspaceID, UserID: u.ID}))
	_, apiKey, err := auth.Keys{Store: st, Now: time.Now}.Create(ctx, store.APIKey{Name: "ci", Role: "member", OrgID: g.rt.OrgID, UserID: u.ID}, "")
	must(t, err)
	priv, pub, err := pc.GenerateSSHKey("")
	must(t, err)
	signer, err := ssh.ParsePrivateKey(priv)
	must(t, err)
	norm, fp, _, err := sshgw.ParsePublicKey(pub)
	must(t, err)
	must(t, st.CreateSSHKey(ctx, store.SSHKey{ID: uuid.NewString(), UserID: u.ID, Fingerprint: fp, PublicKey: norm,
		OrgID: g.rt.OrgID, Role: "member", APIKeyID: apiKey.ID}))
	c, err := g.dial(g.user, signer)
	if err != nil {
		t.Fatalf("while its API key is good: %v", err)
	}
	c.Close()
	_, err = st.RevokeAPIKey(ctx, apiKey.ID, time.Now())
	must(t, err)
	if c, err := g.dial(g.user, signer); err == nil {
		c.Close()
		t.Fatal("an SSH key outlived the API key that registered it")
	}
}

// TestPendingConnsPerAddress: one address cannot hold more than a few
// handshakes open at once; the others still get in.
func TestPendingConnsPerAddress(t *testing.T) {
	g := startGateway(t)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 16 {
		c, err := net.Dial("tcp", g.addr)
		must(t, err)
		held = append(held, c)
	}
	// Wait until the gateway has taken each of them: it sends its version
	// line on a connection it has taken; none gets further.
	for i, c := range held {
		if err := readVersion(c); err != nil {
			t.Fatalf("pending connection %d: %v", i, err)
		}
	}
	extra, err := net.Dial("tcp", g.addr)
	must(t, err)
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(extra); err != nil {
		t.Fatalf("the 17th pending connection was not closed at once: %v", err)
	}
	// Once they are gone, the address gets in again.
	for _, c := range held {
		c.Close()
	}
	held = nil
	testenv.Eventually(t, func() error {
		c, err := g.dial(g.user, g.signer)
		if err != nil {
			return fmt.Errorf("the address is still refused: %w", err)
		}
		return c.Close()
	})
}

// readVersion reads the SSH version line a server sends first on c.
func readVersion(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(testenv.Patience))
	defer c.SetReadDeadline(time.Time{})
	var line []byte
	b := make([]byte, 1)
	for !bytes.HasSuffix(line, []byte("\n")) {
		if _, err := c.Read(b); err != nil {
			return fmt.Errorf("no version line (read %q): %w", line, err)
		}
		line = append(line, b[0])
	}
	if !bytes.HasPrefix(line, []byte("SSH-2.0-")) {
		return fmt.Errorf("version line %q", line)
	}
	return nil
}

// TestAccessRequired: a gateway has no access service of its own: one
// made without the server's refuses to be made, rather than deciding
// with a second service.
func TestAccessRequired(t *testing.T) {
	hostKey, err := sshgw.LoadHostKey(filepath.Join(t.TempDir(), sshgw.HostKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || r != "sshgw: Config.Access is required" {
			t.Fatalf("New without Access: %v, want it refused", r)
		}
	}()
	sshgw.New(sshgw.Config{HostKey: hostKey})
}

// busyStore is a real store whose SSH key lookups answer as SQLite does
// when the database is busy (SQLITE_BUSY), while busy is set; calls
// counts those answers.
type busyStore struct {
	store.Store
	busy  atomic.Bool
	calls chan struct{}
}

func (s *busyStore) GetSSHKey(ctx context.Context, id string) (store.SSHKey, error) {
	if s.busy.Load() {
		select {
		case s.calls <- struct{}{}:
		default:
		}
		return store.SSHKey{}, errdefs.Unavailable("store_busy", "the database is busy; retry")
	}
	return s.Store.GetSSHKey(ctx, id)
}

// TestRecheckOutlivesABusyStore: a store that does not answer the periodic
// recheck ends no connection (the next round decides); a deleted key
// still does.
func TestRecheckOutlivesABusyStore(t *testing.T) {
	var st *busyStore
	g := startGateway(t, func(c *sshgw.Config, envStore store.Store) {
		st = &busyStore{Store: envStore, calls: make(chan struct{})}
		c.Recheck = 10 * time.Millisecond
		c.Access = iam.New(iam.Config{Store: st})
	})
	c := g.client(t)
	closed := make(chan struct{})
	go func() { _ = c.Wait(); close(closed) }()
	st.busy.Store(true)
	// The recheck asks once a round, and a round starts only after the
	// last one's answer was taken: two busy answers mean the first one
	// ended nothing.
	for i := range 2 {
		select {
		case <-st.calls:
		case <-closed:
			t.Fatalf("the connection ended after %d busy rechecks", i)
		}
	}
	st.busy.Store(false)
	s, err := c.NewSession()
	must(t, err)
	out, err := s.Output("echo still here")
	if err != nil || string(out) != "still here\n" {
		t.Fatalf("after a busy store: %q, %v", out, err)
	}
	s.Close()
	_, fp, _, err := sshgw.ParsePublicKey(string(ssh.MarshalAuthorizedKey(g.signer.PublicKey())))
	must(t, err)
	k, err := g.env.Store.GetSSHKeyByFingerprint(t.Context(), fp)
	must(t, err)
	must(t, g.env.Store.DeleteSSHKey(t.Context(), k.UserID, k.ID))
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the connection outlived its deleted key")
	}
}

// TestConnsPerUserAcrossReplicas: where replicas share the count
// (Config.Users, the API's SharedLimits in the store), a user's connection
// another replica serves counts against the cap here, and its end makes
// room here.
func TestConnsPerUserAcrossReplicas(t *testing.T) {
	var there *api.SharedLimits
	g := startGateway(t, func(c *sshgw.Config, st store.Store) {
		c.MaxConnsPerUser = 2
		c.Users = api.NewSharedLimits(api.SharedLimitsConfig{Store: st, Replica: "here"})
		there = api.NewSharedLimits(api.SharedLimitsConfig{Store: st, Replica: "there"})
	})
	_, fp, _, err := sshgw.ParsePublicKey(string(ssh.MarshalAuthorizedKey(g.signer.PublicKey())))
	must(t, err)
	key, err := g.env.Store.GetSSHKeyByFingerprint(t.Context(), fp)
	must(t, err)
	release, ok, err := there.TakeUser(t.Context(), key.UserID, 2)
	if err != nil || !ok {
		t.Fatalf("a connection on the other replica: %v %v", ok, err)
	}
	works := func(c *ssh.Client) bool {
		s, err := c.NewSession()
		if err != nil {
			return false
		}
		defer s.Close()
		return s.Run("true") == nil
	}
	if !works(g.client(t)) {
		t.Fatal("the user's second connection does not work")
	}
	if third, err := g.dial(g.user, g.signer); err == nil {
		ok := works(third)
		third.Close()
		if ok {
			t.Fatal("a third connection across the replicas worked")
		}
	}
	release()
	c, err := g.dial(g.user, g.signer)
	must(t, err)
	defer c.Close()
	if !works(c) {
		t.Fatal("no room after the other replica's connection ended")
	}
}
