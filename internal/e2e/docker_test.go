package e2e

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// dockerEnv runs the API on the Docker provider with org acme, workspace dev
// and one project on the test image, and returns the runtime's path.
func dockerEnv(t testing.TB) (*servertest.Env, *client.Client, pc.Project, string) {
	t.Helper()
	instance := testenv.Instance(t)
	opts := servertest.Options{
		Provider: testenv.DockerProvider(t, instance),
		Instance: instance,
		Image:    testenv.TestImage,
	}
	if _, ok := t.(*testing.B); ok {
		// A benchmark times the server as it serves: without the tests'
		// OpenAPI check of every exchange, and with rate limits that a
		// tight loop never reaches (their buckets are still taken from).
		opts.NoSpecCheck = true
		opts.Limits.PerKey = api.Rate{PerSecond: 1e9, Burst: 1e9}
		opts.Limits.PerClient = api.Rate{PerSecond: 1e9, Burst: 1e9}
	}
	env := servertest.New(t, opts)
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name:    "p1",
		Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64},
	}).Decode(t, &p)
	return env, testenv.DockerClient(t), p, "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
}

// containersOf lists the containers (running or not) labelled with runtime.
func containersOf(t *testing.T, cli *client.Client, runtimeID string) []container.Summary {
	t.Helper()
	cs, err := cli.ContainerList(t.Context(), container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", provider.LabelRuntime+"="+runtimeID)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// execIn runs cmd in a container with the engine's exec (a check from
// outside paddock), as the sandbox's user, and returns its output and exit
// code.
func execIn(t *testing.T, cli *client.Client, id string, cmd ...string) (string, int) {
	t.Helper()
	ctx := t.Context()
	ex, err := cli.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd, User: "1000:1000", AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	att, err := cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := att.Reader.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	ins, err := cli.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The attach stream is multiplexed; strip its 8-byte frame headers.
	return demux(out.String()), ins.ExitCode
}

func demux(s string) string {
	var b strings.Builder
	for len(s) >= 8 {
		n := int(s[4])<<24 | int(s[5])<<16 | int(s[6])<<8 | int(s[7])
		s = s[8:]
		n = min(n, len(s))
		b.WriteString(s[:n])
		s = s[n:]
	}
	return b.String()
}

func TestDockerRuntimeLifecycle(t *testing.T) {
	env, cli, p, rtPath := dockerEnv(t)
	ctx := t.Context()

	if cs := containersOf(t, cli, p.RuntimeID); len(cs) != 0 {
		t.Fatalf("containers before start: %d; provisioning must be lazy", len(cs))
	}

	var rt pc.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	var sb pc.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &sb)
	if name, _ := testenv.TestProvider(t); sb.Provider != name || sb.State != pc.SandboxRunning || sb.Kind != pc.KindRuntime {
		t.Fatalf("row = %+v", sb)
	}
	cs := containersOf(t, cli, p.RuntimeID)
	if len(cs) != 1 || cs[0].ID != sb.ProviderSandboxID || cs[0].Labels[provider.LabelSandbox] != sb.ID || cs[0].Labels[provider.LabelOrg] != sb.OrgID {
		t.Fatalf("containers = %+v, want one for row %+v", cs, sb)
	}
	cid := sb.ProviderSandboxID
	// The short id `docker ps` shows finds the row too.
	var short pc.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+cid[:12], nil).Decode(t, &short)
	if short.ID != sb.ID {
		t.Fatalf("by short provider id: %s, want %s", short.ID, sb.ID)
	}

	// Hardened as the runtime's config says.
	ins, err := cli.ContainerInspect(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.HostConfig
	wantPids := int64(64 + agentpb.AgentThreads) // the agent's threads on top
	if _, rt := testenv.TestProvider(t); rt != "" {
		wantPids = docker.GVisorPidsLimit(64) // the Sentry's threads count too
	}
	if len(hc.CapDrop) != 1 || !strings.EqualFold(hc.CapDrop[0], "ALL") || !hc.ReadonlyRootfs ||
		!strings.Contains(strings.Join(hc.SecurityOpt, ","), "no-new-privileges") ||
		hc.PidsLimit == nil || *hc.PidsLimit != wantPids || hc.Memory != 128<<20 || hc.NanoCPUs != 500_000_000 ||
		hc.NetworkMode != "none" || hc.Privileged {
		t.Fatalf("host config not hardened as configured: %+v", hc)
	}
	if _, ok := hc.Tmpfs["/tmp"]; !ok {
		t.Fatalf("no tmpfs /tmp: %v", hc.Tmpfs)
	}
	if out, code := execIn(t, cli, cid, "sh", "-c", "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; touch /etc/x 2>/dev/null && echo rootfs-writable; awk -F: 'NR>2{gsub(/ /,\"\",$1); print $1}' /proc/net/dev"); code != 0 ||
		!strings.Contains(out, "CapEff:\t0000000000000000") || !strings.Contains(out, "NoNewPrivs:\t1") ||
		strings.Contains(out, "rootfs-writable") || strings.TrimSpace(strings.SplitN(out, "\n", 3)[2]) != "lo" {
		t.Fatalf("inside the sandbox (exit %d):\n%s", code, out)
	}

	// Work in the workspace survives pause, resume and reset.
	if _, code := execIn(t, cli, cid, "sh", "-c", "echo kept > /workspace/notes.txt"); code != 0 {
		t.Fatal("writing the workspace failed")
	}
	// Paused or not is read from the kernel's freezer: the engine's own
	// flag can lag behind a pause or unpause that already returned (see
	// internal/providers/docker/freezer.go).
	// Under gVisor, runsc pauses inside its own kernel and the freezer
	// stays thawed: the engine's flag is the truth there.
	paused := func() (bool, bool) { return frozenContainer(t, cli, cid) }
	if _, rt := testenv.TestProvider(t); rt != "" {
		paused = func() (bool, bool) {
			c, err := cli.ContainerInspect(ctx, cid)
			if err != nil {
				t.Fatal(err)
			}
			return c.State.Paused, true
		}
	}
	env.Must(t, 200, "POST", rtPath+"/pause", nil).Decode(t, &rt)
	if f, ok := paused(); !ok || !f {
		t.Fatalf("container not paused after pause (known: %v)", ok)
	}
	env.Must(t, 200, "POST", rtPath+"/resume", nil).Decode(t, &rt)
	if f, ok := paused(); !ok || f {
		t.Fatalf("container still paused after resume (known: %v)", ok)
	}
	if out, _ := execIn(t, cli, cid, "cat", "/workspace/notes.txt"); strings.TrimSpace(out) != "kept" {
		t.Fatalf("after resume the workspace has %q", out)
	}

	env.Must(t, 200, "POST", rtPath+"/reset", nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeIdle || rt.ID != p.RuntimeID {
		t.Fatalf("after reset: %+v", rt)
	}
	if cs := containersOf(t, cli, p.RuntimeID); len(cs) != 0 {
		t.Fatalf("containers after reset: %d", len(cs))
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+cid, nil).Decode(t, &sb)
	if sb.State != pc.SandboxKilled || sb.KillReason != "reset" {
		t.Fatalf("row after reset = %+v", sb)
	}

	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	cs = containersOf(t, cli, p.RuntimeID)
	if len(cs) != 1 || cs[0].ID == cid {
		t.Fatalf("containers after restart = %+v", cs)
	}
	if out, _ := execIn(t, cli, cs[0].ID, "cat", "/workspace/notes.txt"); strings.TrimSpace(out) != "kept" {
		t.Fatalf("a new sandbox sees %q in the workspace, want the file written before reset", out)
	}

	// Kill through the ledger by the provider's id; the row stays.
	var killed pc.Sandbox
	env.Must(t, 200, "DELETE", "/api/v1/org/acme/sandboxes/"+cs[0].ID, nil).Decode(t, &killed)
	if killed.State != pc.SandboxKilled || len(containersOf(t, cli, p.RuntimeID)) != 0 {
		t.Fatalf("kill left %+v and %d containers", killed, len(containersOf(t, cli, p.RuntimeID)))
	}

	// Reset with wipe_workspace removes the volume; deleting the project too.
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 200, "POST", rtPath+"/reset", pc.ResetRequest{WipeWorkspace: true})
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	cs = containersOf(t, cli, p.RuntimeID)
	if out, code := execIn(t, cli, cs[0].ID, "ls", "/workspace"); code != 0 || strings.TrimSpace(out) != "" {
		t.Fatalf("after wipe the workspace lists %q (exit %d)", out, code)
	}
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	if cs := containersOf(t, cli, p.RuntimeID); len(cs) != 0 {
		t.Fatalf("containers after project delete: %d", len(cs))
	}
	vols, err := cli.VolumeList(ctx, volumeFilter(provider.LabelWorkspace, p.RuntimeID))
	if err != nil || len(vols.Volumes) != 0 {
		t.Fatalf("workspace volumes after project delete: %v %v", vols.Volumes, err)
	}
}

func TestDockerConcurrentStartsProvisionOneContainer(t *testing.T) {
	env, cli, p, rtPath := dockerEnv(t)
	const n = 20
	codes := env.Concurrently(t, n, rtPath+"/start")
	if codes[200] != 1 || codes[409] != n-1 {
		t.Fatalf("status counts = %v, want one 200 and %d 409", codes, n-1)
	}
	if cs := containersOf(t, cli, p.RuntimeID); len(cs) != 1 {
		t.Fatalf("containers = %d, want exactly 1", len(cs))
	}
	var list pc.List[pc.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+p.RuntimeID, nil).Decode(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("ledger rows = %d, want 1", len(list.Items))
	}
}

// TestDockerStartFailureLeavesNoContainer: an image that went from the host
// after its runtime was configured (create refuses a missing one) fails
// the start with image_not_found and leaves nothing behind.
func TestDockerStartFailureLeavesNoContainer(t *testing.T) {
	env, cli, _, _ := dockerEnv(t)
	gone := "paddock/e2e-gone-" + strings.ToLower(testenv.Instance(t)) + ":latest"
	if err := cli.ImageTag(t.Context(), testenv.TestImage, gone); err != nil {
		t.Fatal(err)
	}
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name:    "missing-image",
		Runtime: &pc.RuntimeConfig{Image: gone},
	}).Decode(t, &p)
	if _, err := cli.ImageRemove(t.Context(), gone, image.RemoveOptions{}); err != nil { // the tag only
		t.Fatal(err)
	}
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	r := env.Do(t, "POST", rtPath+"/start", nil)
	if r.Status != 422 || r.Code() != "image_not_found" {
		t.Fatalf("start with a missing image = %d %s, want 422 image_not_found", r.Status, r.Body)
	}
	if cs := containersOf(t, cli, p.RuntimeID); len(cs) != 0 {
		t.Fatalf("containers left behind: %d", len(cs))
	}
	var rt pc.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeError || !strings.Contains(rt.StatusReason, "image") {
		t.Fatalf("runtime = %+v, want error with the reason", rt)
	}
	var list pc.List[pc.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+p.RuntimeID, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].State != pc.SandboxKilled || list.Items[0].KillReason != "provision_failed" {
		t.Fatalf("ledger = %+v", list.Items)
	}
}

// frozenContainer reports whether a running container's processes are
// frozen, from the kernel.
func frozenContainer(t *testing.T, cli *client.Client, id string) (bool, bool) {
	t.Helper()
	ins, err := cli.ContainerInspect(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !ins.State.Running {
		t.Fatalf("container %s is not running: %+v", id, ins.State)
	}
	return docker.Frozen(ins.State.Pid)
}
