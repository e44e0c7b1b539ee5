package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

const worldsPath = "/api/v1/org/acme/ws/dev/worlds"

// worldEnv is the API on Docker, priced, with org acme and workspace dev.
type worldEnv struct {
	env *servertest.Env
	cli *client.Client
}

func newWorldEnv(t *testing.T) *worldEnv {
	t.Helper()
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.RuncProvider(t, instance), Instance: instance, Image: testenv.TestImage,
		Pricing:      &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
		NewOrgMicros: 1_000_000_000,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	return &worldEnv{env: env, cli: testenv.DockerClient(t)}
}

// serverMember serves "hello from NAME" over HTTP on port 8080.
func serverMember(name string) pc.WorldMemberRequest {
	return pc.WorldMemberRequest{Name: name, Runtime: &pc.RuntimeConfig{Image: testenv.TestImage, CPUMillis: 250, MemoryMB: 64},
		Command: []string{"sh", "-c", "echo hello from " + name + " > /workspace/index.html && exec busybox httpd -f -p 8080 -h /workspace"}}
}

// plainMember runs nothing of its own.
func plainMember(name string) pc.WorldMemberRequest {
	return pc.WorldMemberRequest{Name: name, Runtime: &pc.RuntimeConfig{Image: testenv.TestImage, CPUMillis: 250, MemoryMB: 64}}
}

// create starts a world and returns it.
func (e *worldEnv) create(t *testing.T, name string, members ...pc.WorldMemberRequest) pc.World {
	t.Helper()
	var w pc.World
	e.env.Must(t, 201, "POST", worldsPath, pc.CreateWorldRequest{Name: name, Members: members}).Decode(t, &w)
	if w.Status != "running" || len(w.Members) != len(members) {
		t.Fatalf("created world: %+v", w)
	}
	return w
}

// get reads a world.
func (e *worldEnv) get(t *testing.T, id string) pc.World {
	t.Helper()
	var w pc.World
	e.env.Must(t, 200, "GET", worldsPath+"/"+id, nil).Decode(t, &w)
	return w
}

// exec runs argv in member of world id and returns its exit code and
// output.
func (e *worldEnv) exec(t *testing.T, id, member string, argv ...string) (int, string) {
	t.Helper()
	var res pc.ExecResult
	e.env.Must(t, 200, "POST", worldsPath+"/"+id+"/members/"+member+"/exec", pc.ExecRequest{Argv: argv}).Decode(t, &res)
	if res.Exit == nil {
		t.Fatalf("exec %v in %s: no exit", argv, member)
	}
	return res.Exit.Code, string(res.Stdout) + string(res.Stderr)
}

// fetch is the command that asks addr (host:port) for /index.html over
// HTTP from a member, giving up after three seconds (the image's wget
// does not run: nc speaks the request).
func fetch(addr string) []string {
	host, port, _ := net.SplitHostPort(addr)
	return []string{"sh", "-c", `printf 'GET /index.html HTTP/1.0\r\n\r\n' | busybox timeout 5 busybox nc -w 3 "$0" "$1"`, host, port}
}

// reaches waits until from, in world id, gets want from addr.
func (e *worldEnv) reaches(t *testing.T, id, from, addr, want string) {
	t.Helper()
	testenv.Eventually(t, func() error {
		code, out := e.exec(t, id, from, fetch(addr)...)
		if code != 0 || !strings.Contains(out, want) {
			return fmt.Errorf("%s got %q (exit %d) from %s", from, out, code, addr)
		}
		return nil
	})
}

// unreachable fails when from, in world id, gets an answer from addr.
func (e *worldEnv) unreachable(t *testing.T, id, from, addr string) {
	t.Helper()
	if code, out := e.exec(t, id, from, fetch(addr)...); code == 0 || strings.Contains(out, "HTTP/") {
		t.Fatalf("%s reached %s: %q", from, addr, out)
	}
}

// noTrace fails when a container of the world's members or its network
// is still there.
func (e *worldEnv) noTrace(t *testing.T, w pc.World) {
	t.Helper()
	for _, m := range w.Members {
		cs, err := e.cli.ContainerList(t.Context(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", provider.LabelSandbox+"="+m.SandboxID))})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 0 {
			t.Fatalf("member %s's container is still there", m.Name)
		}
		if _, err := e.cli.VolumeInspect(t.Context(), "paddock-ws-world-"+m.SandboxID); err == nil {
			t.Fatalf("member %s's workspace volume is still there", m.Name)
		}
	}
	if _, err := e.cli.NetworkInspect(t.Context(), "paddock-world-"+w.ID, network.InspectOptions{}); err == nil {
		t.Fatalf("world %s's network is still there", w.ID)
	}
}

// TestWorldPrivateNetwork: two members reach each other by name over
// their world's network; neither reaches the host (a listener on its
// loopback, or one on the world network's own gateway address), nor a
// member of another world.
func TestWorldPrivateNetwork(t *testing.T) {
	e := newWorldEnv(t)
	a := e.create(t, "alpha", serverMember("server"), plainMember("client"))
	b := e.create(t, "beta", serverMember("server"), plainMember("client"))

	e.reaches(t, a.ID, "client", "server:8080", "hello from server")
	e.reaches(t, b.ID, "client", "server:8080", "hello from server")
	if code, out := e.exec(t, a.ID, "server", "hostname"); code != 0 || strings.TrimSpace(out) != "server" {
		t.Fatalf("the server's hostname: %q (exit %d)", out, code)
	}

	// The host: one listener on its loopback, one on the world bridge's
	// address, which the bridge would otherwise carry to it.
	insp, err := e.cli.NetworkInspect(t.Context(), "paddock-world-"+a.ID, network.InspectOptions{})
	if err != nil || len(insp.IPAM.Config) == 0 || !insp.Internal {
		t.Fatalf("world network: %+v, %v", insp, err)
	}
	gw := insp.IPAM.Config[0].Gateway
	for _, addr := range []string{"127.0.0.1:0", net.JoinHostPort(gw, "0")} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host") }), ReadHeaderTimeout: time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		port := ln.Addr().(*net.TCPAddr).Port
		e.unreachable(t, a.ID, "client", net.JoinHostPort(gw, fmt.Sprint(port)))
		e.unreachable(t, a.ID, "client", fmt.Sprintf("127.0.0.1:%d", port))
	}

	// Another world's server, by its address on its own network.
	bServer := b.Members[0].Sandbox
	c, err := e.cli.ContainerInspect(t.Context(), bServer.ProviderSandboxID)
	if err != nil {
		t.Fatal(err)
	}
	bAddr := c.NetworkSettings.Networks["paddock-world-"+b.ID].IPAddress
	if bAddr == "" {
		t.Fatalf("world beta's server has no address on its network: %+v", c.NetworkSettings.Networks)
	}
	e.reaches(t, b.ID, "client", bAddr+":8080", "hello from server")
	e.unreachable(t, a.ID, "client", bAddr+":8080")
	// Nor the outside world: the network has no route out.
	e.unreachable(t, a.ID, "client", "1.1.1.1:80")
}

// TestWorldPauseResumeDelete: a world is paused and resumed as one (every
// member's row and container), billed as the sum of its members (listed
// with kind=world), and deleted leaving no container, volume or network.
func TestWorldPauseResumeDelete(t *testing.T) {
	e := newWorldEnv(t)
	w := e.create(t, "gamma", serverMember("server"), plainMember("client"))
	e.reaches(t, w.ID, "client", "server:8080", "hello from server")

	var list pc.SandboxList
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?kind=world", nil).Decode(t, &list)
	if len(list.Items) != 2 {
		t.Fatalf("kind=world lists %d rows", len(list.Items))
	}
	for _, sb := range list.Items {
		if sb.Kind != "world" || sb.State != "running" || (sb.ID != w.Members[0].SandboxID && sb.ID != w.Members[1].SandboxID) {
			t.Fatalf("a listed member: %+v", sb)
		}
	}

	var paused pc.World
	e.env.Must(t, 200, "POST", worldsPath+"/"+w.ID+"/pause", nil).Decode(t, &paused)
	if paused.Status != "paused" {
		t.Fatalf("paused: %+v", paused)
	}
	for _, m := range e.get(t, w.ID).Members {
		c, err := e.cli.ContainerInspect(t.Context(), m.Sandbox.ProviderSandboxID)
		if err != nil || !c.State.Paused || m.Sandbox.State != "paused" {
			t.Fatalf("member %s after pause: row %s, container paused %v (%v)", m.Name, m.Sandbox.State, c.State != nil && c.State.Paused, err)
		}
	}
	wantErrorCode(t, e.env.Do(t, "POST", worldsPath+"/"+w.ID+"/members/client/exec", pc.ExecRequest{Argv: []string{"true"}}), 409, "world_conflict")

	e.env.Must(t, 200, "POST", worldsPath+"/"+w.ID+"/resume", nil)
	got := e.get(t, w.ID)
	for _, m := range got.Members {
		if m.Sandbox.State != "running" {
			t.Fatalf("member %s after resume: %s", m.Name, m.Sandbox.State)
		}
	}
	e.reaches(t, w.ID, "client", "server:8080", "hello from server")

	// Billed as one: the sum of its members' rows.
	var sum float64
	for _, m := range got.Members {
		sum += m.Sandbox.EstimatedTotalCredits
	}
	if got.EstimatedTotalCredits <= 0 || got.EstimatedTotalCredits != sum || got.BilledCredits > got.EstimatedTotalCredits {
		t.Fatalf("world cost %v (billed %v), members' %v", got.EstimatedTotalCredits, got.BilledCredits, sum)
	}

	var deleted pc.World
	e.env.Must(t, 200, "DELETE", worldsPath+"/"+w.ID, nil).Decode(t, &deleted)
	if deleted.Status != "deleted" {
		t.Fatalf("deleted: %+v", deleted)
	}
	for _, m := range deleted.Members {
		if m.Sandbox.State != "killed" || m.Sandbox.KillReason != runtime.KillDeleted || m.Sandbox.BilledCredits <= 0 {
			t.Fatalf("member %s after delete: %+v", m.Name, m.Sandbox)
		}
	}
	e.noTrace(t, deleted)
	wantErrorCode(t, e.env.Do(t, "DELETE", worldsPath+"/"+w.ID, nil), 409, "world_conflict")
}

// TestWorldFailingMemberLeavesNothing: a member whose command cannot
// start fails the create after every member's sandbox was made: all are
// killed, the network removed, and the world recorded failed.
func TestWorldFailingMemberLeavesNothing(t *testing.T) {
	e := newWorldEnv(t)
	bad := plainMember("bad")
	bad.Command = []string{"/no/such/program"}
	res := e.env.Do(t, "POST", worldsPath, pc.CreateWorldRequest{Name: "delta", Members: []pc.WorldMemberRequest{plainMember("good"), bad}})
	if res.Status < 400 || res.Status >= 500 {
		t.Fatalf("a failing member: %d %s", res.Status, res.Body)
	}
	var list pc.WorldList
	e.env.Must(t, 200, "GET", worldsPath, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].Status != "failed" || list.Items[0].Error == "" {
		t.Fatalf("worlds: %+v", list.Items)
	}
	w := list.Items[0]
	for _, m := range w.Members {
		if m.Sandbox == nil || m.Sandbox.State != "killed" || m.Sandbox.KillReason != runtime.KillProvisionFailed {
			t.Fatalf("member %s: %+v", m.Name, m.Sandbox)
		}
	}
	e.noTrace(t, w)
}

// failingProvider is the Docker provider that refuses to create the
// sandbox of the world member named bad.
type failingProvider struct{ *docker.Provider }

func (p failingProvider) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	if spec.GroupName == "bad" {
		return provider.Handle{}, errdefs.Unavailable("engine_unavailable", "the engine refused the container")
	}
	return p.Provider.Create(ctx, spec)
}

// TestWorldMemberThatCannotBeMade: a member whose sandbox the provider
// cannot create, after another member's started, fails the create: the
// started member is killed and removed, the network too, and the world
// is recorded failed.
func TestWorldMemberThatCannotBeMade(t *testing.T) {
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: failingProvider{testenv.RuncProvider(t, instance)}, Instance: instance, Image: testenv.TestImage,
		Pricing: &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute}, NewOrgMicros: 1_000_000_000,
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	e := &worldEnv{env: env, cli: testenv.DockerClient(t)}
	res := env.Do(t, "POST", worldsPath, pc.CreateWorldRequest{Name: "epsilon", Members: []pc.WorldMemberRequest{serverMember("good"), plainMember("bad")}})
	if res.Status != 503 || res.Code() != "engine_unavailable" {
		t.Fatalf("a member that cannot be made: %d %s", res.Status, res.Body)
	}
	var list pc.WorldList
	env.Must(t, 200, "GET", worldsPath, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].Status != "failed" {
		t.Fatalf("worlds: %+v", list.Items)
	}
	w := list.Items[0]
	for _, m := range w.Members {
		if m.Sandbox == nil || m.Sandbox.State != "killed" || m.Sandbox.KillReason != runtime.KillProvisionFailed {
			t.Fatalf("member %s: %+v", m.Name, m.Sandbox)
		}
	}
	if w.Members[0].Sandbox.StartedAt == nil {
		t.Fatal("the good member never started: the test proves nothing")
	}
	e.noTrace(t, w)
}

// TestWorldReconciledAfterRestart: a world its server left starting is
// torn down by the next start's reconciliation, and one left running with
// a member's container gone is failed and removed; a network no world
// owns is removed; a running world whose members are all there is kept.
func TestWorldReconciledAfterRestart(t *testing.T) {
	e := newWorldEnv(t)
	ctx := t.Context()
	kept := e.create(t, "kept", plainMember("a"))
	broken := e.create(t, "broken", plainMember("a"), plainMember("b"))
	if err := e.cli.ContainerRemove(ctx, broken.Members[1].Sandbox.ProviderSandboxID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	half := e.create(t, "half", plainMember("a"))
	row, err := e.env.Store.GetWorld(ctx, half.ID)
	if err != nil {
		t.Fatal(err)
	}
	row.Status = "starting" // as a create cut short leaves it
	if ok, err := e.env.Store.UpdateWorld(ctx, row, "running"); err != nil || !ok {
		t.Fatalf("update: %v %v", ok, err)
	}
	stray := "00000000-0000-4000-8000-000000000001"
	if err := e.env.Runtimes.CreateWorldNetwork(ctx, "docker", stray); err != nil {
		t.Fatal(err)
	}

	n, err := e.env.Worlds.Reconcile(ctx)
	if err != nil || n != 2 {
		t.Fatalf("reconciled %d, %v", n, err)
	}
	if got := e.get(t, kept.ID); got.Status != "running" {
		t.Fatalf("the intact world: %+v", got)
	}
	for _, id := range []string{broken.ID, half.ID} {
		got := e.get(t, id)
		if got.Status != "failed" || got.Error == "" {
			t.Fatalf("world %s: %+v", got.Name, got)
		}
		e.noTrace(t, got)
	}
	if got := e.get(t, broken.ID); got.Members[1].Sandbox.KillReason != runtime.KillVanished || got.Members[0].Sandbox.KillReason != runtime.KillInterrupted {
		t.Fatalf("broken's members: %+v %+v", got.Members[0].Sandbox, got.Members[1].Sandbox)
	}
	if _, err := e.cli.NetworkInspect(ctx, "paddock-world-"+stray, network.InspectOptions{}); err == nil {
		t.Fatal("the stray world network is still there")
	}
}

// wantErrorCode fails unless res is status with code.
func wantErrorCode(t *testing.T, res servertest.Response, status int, code string) {
	t.Helper()
	if res.Status != status || res.Code() != code {
		t.Fatalf("got %d %s, want %d %s", res.Status, res.Body, status, code)
	}
}

// TestWorldCLIOnDocker: `paddock world create` starts members from
// --member specs (image, env, a command), `world exec` runs a command in
// one that reaches another by name and exits with its code, and `ls`,
// `pause`, `resume` and `rm` act on the world by name.
func TestWorldCLIOnDocker(t *testing.T) {
	e := newWorldEnv(t)
	env := clitest.Env(e.env.URL, e.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	img := testenv.TestImage
	clitest.MustRun(t, env, "world", "create", "arena",
		"--member", "name=server,image="+img+",memory=64,cmd=echo hello from cli > /workspace/index.html && exec busybox httpd -f -p 8080 -h /workspace",
		"--member", "name=player,image="+img+",env=GREETING=hi there")
	testenv.Eventually(t, func() error {
		out, _, code := clitest.Run(t, env, "world", "exec", "arena", "player", "--", "sh", "-c",
			`printf 'GET /index.html HTTP/1.0\r\n\r\n' | busybox nc -w 3 server 8080`)
		if code != 0 || !strings.Contains(out, "hello from cli") {
			return fmt.Errorf("world exec: %d %q", code, out)
		}
		return nil
	})
	if out := clitest.MustRun(t, env, "world", "exec", "arena", "player", "--", "sh", "-c", "echo $GREETING"); strings.TrimSpace(out) != "hi there" {
		t.Fatalf("the member's env: %q", out)
	}
	if _, _, code := clitest.Run(t, env, "world", "exec", "arena", "player", "--", "sh", "-c", "exit 3"); code != 3 {
		t.Fatalf("world exec of exit 3 exited %d", code)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "world", "ls"))
	if len(rows) != 2 || rows[1][1] != "arena" || rows[1][2] != "running" || rows[1][3] != "2" {
		t.Fatalf("world ls: %v", rows)
	}
	if out := clitest.MustRun(t, env, "world", "pause", "arena"); !strings.Contains(out, "paused") {
		t.Fatalf("world pause: %q", out)
	}
	if out := clitest.MustRun(t, env, "world", "resume", "arena"); !strings.Contains(out, "running") {
		t.Fatalf("world resume: %q", out)
	}
	var w pc.World
	e.env.Must(t, 200, "GET", worldsPath+"/"+rows[1][0], nil).Decode(t, &w)
	if out := clitest.MustRun(t, env, "world", "rm", "arena"); !strings.Contains(out, "deleted") {
		t.Fatalf("world rm: %q", out)
	}
	e.noTrace(t, w)
}

// TestWorldOtherOrgSeesNothing: another org's admin finds no world of
// acme's, by acme's path or its own, and cannot act on it.
func TestWorldOtherOrgSeesNothing(t *testing.T) {
	e := newWorldEnv(t)
	w := e.create(t, "private", plainMember("a"))
	e.env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "other"})
	e.env.Must(t, 201, "POST", "/api/v1/org/other/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var o pc.Org
	e.env.Must(t, 200, "GET", "/api/v1/org/other", nil).Decode(t, &o)
	key, _, err := auth.Keys{Store: e.env.Store, Now: time.Now}.Create(t.Context(), store.APIKey{Name: "other admin", Role: string(auth.RoleAdmin), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantErrorCode(t, e.env.DoKey(t, key, "GET", worldsPath+"/"+w.ID, nil), 404, "org_not_found")
	theirs := "/api/v1/org/other/ws/dev/worlds/" + w.ID
	wantErrorCode(t, e.env.DoKey(t, key, "GET", theirs, nil), 404, "world_not_found")
	wantErrorCode(t, e.env.DoKey(t, key, "DELETE", theirs, nil), 404, "world_not_found")
	wantErrorCode(t, e.env.DoKey(t, key, "POST", theirs+"/pause", nil), 404, "world_not_found")
	wantErrorCode(t, e.env.DoKey(t, key, "POST", theirs+"/members/a/exec", pc.ExecRequest{Argv: []string{"true"}}), 404, "world_not_found")
	var list pc.WorldList
	e.env.DoKey(t, key, "GET", "/api/v1/org/other/ws/dev/worlds", nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("the other org lists %+v", list.Items)
	}
	if got := e.get(t, w.ID); got.Status != "running" {
		t.Fatalf("acme's world after the other org's tries: %+v", got)
	}
}
