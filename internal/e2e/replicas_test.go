package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// replicaSet is an installation served by several paddock serve
// processes on one host: one PostgreSQL database, one data directory (the
// secrets key, the SSH host key, the egress CA, the run directory with the
// agents' sockets); each replica has its own API and SSH addresses.
type replicaSet struct {
	bin, shim, instance, data string
	env                       []string
	svcPort                   string // svc.test's port, on loopback
}

const replicaKey = "pdk_00000000000000000000000000000000000000000000a1b3"

func newReplicaSet(t *testing.T) *replicaSet {
	t.Helper()
	testenv.RequireDocker(t, testenv.DefaultImage)
	dsn := testenv.Postgres(t)
	svc := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from svc")
	})}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go svc.Serve(l)
	t.Cleanup(func() { svc.Close() })
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	rs := &replicaSet{
		bin: testenv.Binary(t, "paddock"), shim: testenv.Binary(t, "paddock-shim"),
		// The run directory is the default one, under the data directory
		// (whose start lock its mount must not wait for).
		instance: testenv.Instance(t), data: t.TempDir(),
		svcPort: port,
		env: []string{"PADDOCK_STORE=" + dsn, "PADDOCK_LEASE_TTL=2s",
			"PADDOCK_EGRESS_DISABLED=false", "PADDOCK_EGRESS_HOSTS=svc.test=127.0.0.1:" + port},
	}
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, rs.instance) })
	return rs
}

// begin starts one more replica, without waiting for it.
func (rs *replicaSet) begin(t *testing.T) *starting {
	t.Helper()
	return begin(t, serveCommand(t, rs.bin, rs.shim, rs.data, "", rs.instance, replicaKey, rs.env...))
}

// replica is one paddock serve of a replicaSet and a client of its API.
type replica struct {
	*server
	c *pc.Client
}

func (rs *replicaSet) ready(t *testing.T, st *starting) *replica {
	t.Helper()
	s := st.ready(t, 2*time.Minute, nil)
	return &replica{server: s, c: sdkFor(t, s, replicaKey)}
}

// sh runs a shell script in runtime rid through r.
func (r *replica) sh(t *testing.T, rid, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := r.c.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"bash", "-c", script}})
	if err != nil {
		t.Fatalf("%s through %s: %v", script, r.url, err)
	}
	return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
}

// reachesSvc checks, a few times over (the kernel spreads the sandbox's
// connections over the replicas' proxy listeners), that runtime rid
// reaches svc.test through the egress proxy.
func (rs *replicaSet) reachesSvc(t *testing.T, r *replica, rid, when string) {
	t.Helper()
	for range 4 {
		if got := r.sh(t, rid, "curl -sS -m 30 http://svc.test:"+rs.svcPort+"/"); got != "hello from svc" {
			t.Fatalf("%s: the proxy sandbox reached svc.test with %q", when, got)
		}
	}
}

// TestReplicas: two paddock serve processes on one PostgreSQL database and
// one data directory serve the same API and reach every sandbox, whichever
// started it. They start at the same moment on a fresh installation. A
// runtime started through A is driven through B: exec, files, a terminal,
// its preview URL, an SSH session through B's gateway; paused through B,
// it wakes for an exec through A. Its sandbox, in proxy mode, reaches its
// allowed host through the proxy port the replicas share, and still does
// after A stops (SIGTERM) and, with A back, after B dies (SIGKILL).
func TestReplicas(t *testing.T) {
	rs := newReplicaSet(t)
	sa, sb := rs.begin(t), rs.begin(t)
	a, b := rs.ready(t, sa), rs.ready(t, sb)
	ctx := t.Context()

	if _, err := a.c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	p, err := a.c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "agent", Runtime: &pc.RuntimeConfig{
		Image: testenv.DefaultImage, MemoryMB: 256,
		Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{"svc.test:" + rs.svcPort}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rid := p.RuntimeID
	if _, err := a.c.StartRuntime(ctx, "acme", "dev", rid, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}

	if got := b.sh(t, rid, "echo from-$((6*7))"); got != "from-42" {
		t.Errorf("exec through B: %q", got)
	}
	filesThrough(t, b, rid)
	terminalThrough(t, b, rid)
	previewThrough(t, b, rid)
	sshThrough(t, a, b, rid)
	rs.reachesSvc(t, b, rid, "both replicas serving")

	if _, err := b.c.PauseRuntime(ctx, "acme", "dev", rid); err != nil {
		t.Fatal(err)
	}
	if rt, err := a.c.GetRuntime(ctx, "acme", "dev", rid); err != nil || rt.Status != pc.RuntimePaused {
		t.Fatalf("through A after B paused it: %+v, %v", rt.Status, err)
	}
	if got := a.sh(t, rid, "cat /workspace/note"); got != "written through B" {
		t.Errorf("exec through A waking the runtime: %q", got)
	}
	if rt, err := b.c.GetRuntime(ctx, "acme", "dev", rid); err != nil || rt.Status != pc.RuntimeRunning {
		t.Fatalf("through B after an exec through A woke it: %+v, %v", rt.Status, err)
	}

	a.stop(t) // SIGTERM: its proxy listener and its firewall share go
	if got := b.sh(t, rid, "echo after-a"); got != "after-a" {
		t.Errorf("exec through B after A stopped: %q", got)
	}
	rs.reachesSvc(t, b, rid, "after A stopped")

	a = rs.ready(t, rs.begin(t)) // A again, beside B
	b.kill(t)                    // SIGKILL: B cleans up nothing
	if got := a.sh(t, rid, "cat /workspace/note"); got != "written through B" {
		t.Errorf("exec through A after B died: %q", got)
	}
	rs.reachesSvc(t, a, rid, "after B died")
	if _, err := os.Stat(filepath.Join(rs.data, "paddock.db")); err == nil {
		t.Error("the replicas made a SQLite store in their data directory; want them on PostgreSQL")
	}
}

// filesThrough writes a file through r and reads it back.
func filesThrough(t *testing.T, r *replica, rid string) {
	t.Helper()
	ctx := t.Context()
	if _, err := r.c.WriteFile(ctx, "acme", "dev", rid, "/workspace/note", strings.NewReader("written through B"), pc.WriteFileOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := r.c.ReadFile(ctx, "acme", "dev", rid, "/workspace/note")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "written through B" {
		t.Errorf("file read through %s: %q, %v", r.url, b, err)
	}
}

// terminalThrough runs a command in a terminal through r.
func terminalThrough(t *testing.T, r *replica, rid string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tm, err := r.c.Terminal(ctx, "acme", "dev", rid, pc.TerminalOptions{Argv: []string{"sh", "-c", "echo term-$((6*7))"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	out, err := io.ReadAll(tm)
	if err != nil || !bytes.Contains(out, []byte("term-42")) {
		t.Errorf("terminal through %s: %q, %v", r.url, out, err)
	}
}

// previewThrough serves a web server in the sandbox and requests its
// preview URL on r, with a preview token r signed.
func previewThrough(t *testing.T, r *replica, rid string) {
	t.Helper()
	installWebserver(t, r.c, rid)
	tok, err := r.c.PreviewToken(t.Context(), "acme", "dev", rid, 8080, pc.PreviewTokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://8080-" + api.ShortID(rid) + ".localhost:" + portOfURL(r.url) + "/"
	testenv.Eventually(t, func() error {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Paddock-Preview-Token", tok.Token)
		resp, err := loopbackClient().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("hello from the sandbox")) {
			return fmt.Errorf("preview %s: %s %s", url, resp.Status, body)
		}
		return nil
	})
}

// sshThrough opens an SSH session through r's gateway as a member that
// admin (another replica) made.
func sshThrough(t *testing.T, admin, r *replica, rid string) {
	t.Helper()
	ctx := t.Context()
	if _, err := admin.c.AddOrgMember(ctx, "acme", pc.AddOrgMemberRequest{Member: "ops@example.test", Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	k, err := admin.c.CreateKey(ctx, "acme", pc.CreateKeyRequest{Member: "ops@example.test", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	member, err := pc.New(r.url, k.Key)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, err := pc.GenerateSSHKey("ops")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := member.AddSSHKey(ctx, pc.AddSSHKeyRequest{PublicKey: pub}); err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	info, err := r.c.SSHInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(info.HostKey))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", info.Address, &ssh.ClientConfig{
		User: sshgw.UserName(rid), Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("ssh through %s: %v", info.Address, err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if out, err := sess.Output("cat /workspace/note"); err != nil || string(out) != "written through B" {
		t.Errorf("ssh through %s: %q, %v", info.Address, out, err)
	}
}
