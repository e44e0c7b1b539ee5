package docker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestHardening proves, on the real engine, that the container is confined
// as documented: from its configuration and from inside; on runc and under
// gVisor.
func TestHardening(t *testing.T) { eachFlavour(t, false, testHardening) }

func testHardening(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	underGVisor := fl.runtime != ""
	// The agent's threads come on top of the sandbox's 64 (see
	// agentpb.AgentThreads). Under gVisor the pids cgroup counts the
	// sandbox kernel's threads too, so the provider raises it (4×64+64;
	// see GVisorPidsLimit).
	wantPids := int64(64 + agentpb.AgentThreads)
	if underGVisor {
		wantPids = 320
	}
	spec := e.spec()
	spec.Env = map[string]string{"GREETING": "hello"}
	spec.Labels = map[string]string{"dev.paddock.project": "p1", provider.LabelManaged: "spoofed"}
	h := e.started(t, spec)

	c, err := e.cli.ContainerInspect(t.Context(), h.ID)
	if err != nil {
		t.Fatal(err)
	}
	hc := c.HostConfig
	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"name", c.Name == "/paddock-"+spec.SandboxID[:12], c.Name},
		{"cap drop ALL, the agent's three back", slices.Equal(hc.CapDrop, []string{"ALL"}) && slices.Equal(hc.CapAdd, []string{"CAP_KILL", "CAP_SETGID", "CAP_SETUID"}), [][]string{hc.CapDrop, hc.CapAdd}},
		{"no-new-privileges", slices.Contains(hc.SecurityOpt, "no-new-privileges"), hc.SecurityOpt},
		{"not privileged", !hc.Privileged, hc.Privileged},
		{"read-only root", hc.ReadonlyRootfs, hc.ReadonlyRootfs},
		{"network none", hc.NetworkMode == "none", hc.NetworkMode},
		{"no published ports", len(hc.PortBindings) == 0, hc.PortBindings},
		{"runtime", hc.Runtime == fl.runtime || !underGVisor && hc.Runtime == "runc", hc.Runtime},
		{"pids limit", hc.PidsLimit != nil && *hc.PidsLimit == wantPids, hc.PidsLimit},
		{"memory", hc.Memory == 64<<20, hc.Memory},
		{"no swap beyond memory", hc.MemorySwap == hc.Memory, hc.MemorySwap},
		{"cpus", hc.NanoCPUs == 500_000_000, hc.NanoCPUs},
		{"no docker init", hc.Init != nil && !*hc.Init, hc.Init},
		{"/dev/shm", hc.ShmSize == 16<<20, hc.ShmSize},
		{"tmpfs /tmp", strings.Contains(hc.Tmpfs["/tmp"], "size=16m") && strings.Contains(hc.Tmpfs["/tmp"], "nosuid") && !strings.Contains(hc.Tmpfs["/tmp"], "noexec"), hc.Tmpfs},
		{"entrypoint", slices.Equal(c.Config.Entrypoint, []string{"/.paddock/bin/paddock-shim", "serve", "--socket", "/.paddock/run/agent.sock", "--key-file", "/.paddock/run/agent.key", "--user", "user"}), c.Config.Entrypoint},
		{"no cmd", len(c.Config.Cmd) == 0, c.Config.Cmd},
		{"bounded log", hc.LogConfig.Type == "json-file" && hc.LogConfig.Config["max-size"] == "1m" && hc.LogConfig.Config["max-file"] == "2", hc.LogConfig},
		{"working dir", c.Config.WorkingDir == "/workspace", c.Config.WorkingDir},
		{"HOME", slices.Contains(c.Config.Env, "HOME=/home/user"), c.Config.Env},
		{"spec env", slices.Contains(c.Config.Env, "GREETING=hello"), c.Config.Env},
		{"managed label not spoofable", c.Config.Labels[provider.LabelManaged] == "true", c.Config.Labels},
		{"instance label", c.Config.Labels[provider.LabelInstance] == e.instance, c.Config.Labels},
		{"sandbox label", c.Config.Labels[provider.LabelSandbox] == spec.SandboxID, c.Config.Labels},
		{"runtime label", c.Config.Labels[provider.LabelRuntime] == spec.RuntimeID, c.Config.Labels},
		{"org label", c.Config.Labels[provider.LabelOrg] == spec.OrgID, c.Config.Labels},
		{"extra label", c.Config.Labels["dev.paddock.project"] == "p1", c.Config.Labels},
	}
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("%s: got %v", ck.name, ck.got)
		}
	}
	mounts := map[string]container.MountPoint{}
	for _, m := range c.Mounts {
		mounts[m.Destination] = m
	}
	if m := mounts["/workspace"]; m.Type != mount.TypeVolume || m.Name != spec.Workspace || !m.RW {
		t.Errorf("workspace mount = %+v", m)
	}
	if m := mounts["/.paddock/bin/paddock-shim"]; m.Type != mount.TypeBind || filepath.Dir(m.Source) != e.runDir || m.RW {
		t.Errorf("shim mount = %+v (want a read-only bind of the shim's copy in %s)", m, e.runDir)
	}
	if m := mounts["/.paddock/run"]; m.Type != mount.TypeBind || filepath.Dir(m.Source) != e.runDir {
		t.Errorf("socket dir mount = %+v", m)
	}

	// From inside.
	status := e.mustExecAsUser(t, h.ID, "cat", "/proc/self/status")
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(status, want) {
			t.Errorf("/proc/self/status lacks %q:\n%s", want, status)
		}
	}
	mnt := e.mustExec(t, h.ID, "cat", "/proc/mounts")
	for _, line := range strings.Split(mnt, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		opts := strings.Split(f[3], ",")
		switch f[1] {
		case "/":
			if !slices.Contains(opts, "ro") {
				t.Errorf("root is mounted %s, want ro", f[3])
			}
		case "/tmp":
			// gVisor's tmpfs does not list nodev: it has no host devices
			// to open, and the sandbox cannot make device nodes (no
			// CAP_MKNOD) anyway.
			if f[2] != "tmpfs" || !slices.Contains(opts, "nosuid") || !underGVisor && !slices.Contains(opts, "nodev") || slices.Contains(opts, "noexec") || !slices.Contains(opts, "size=16384k") {
				t.Errorf("/tmp is %s %s, want tmpfs rw,nosuid,nodev,size=16384k with exec", f[2], f[3])
			}
		}
	}
	// The limits as the kernel applies them (cgroup v1, else v2): inside,
	// and for gVisor, whose own cgroups do not carry the pids limit, on
	// the host.
	limits := e.mustExec(t, h.ID, "sh", "-c", `
		cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
		cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max`)
	got := strings.Fields(limits)
	if underGVisor && len(got) == 2 {
		got[1] = hostPidsMax(t, c.State.Pid)
	}
	if want := []string{"67108864", strconv.FormatInt(wantPids, 10)}; !slices.Equal(got, want) {
		t.Errorf("memory and pids limits = %q, want %q", got, want)
	}
	if underGVisor {
		if out := e.mustExec(t, h.ID, "uname", "-r"); !strings.Contains(out, "gvisor") {
			t.Errorf("the sandbox's kernel is %q, not gVisor's", out)
		}
	}
	if out, code := e.execIn(t, h.ID, "sh", "-c", "echo x > /etc/x"); code == 0 {
		t.Errorf("writing /etc/x succeeded on a read-only root: %s", out)
	}
	// /tmp is writable and allows exec (agents build things there).
	e.mustExec(t, h.ID, "sh", "-c", "cp /bin/busybox /tmp/true && /tmp/true")
	if out := e.mustExecAsUser(t, h.ID, "sh", "-c", "echo data > /workspace/f && cat /home/user/f && pwd && echo $HOME && stat -c %u:%g /workspace /home/user"); out != "data\n/workspace\n/home/user\n1000:1000\n1000:1000\n" {
		t.Errorf("workspace check printed %q", out)
	}
	// Interfaces from /proc/net/dev: gVisor's /sys has no class/net.
	if out := e.mustExec(t, h.ID, "sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"); strings.Join(strings.Fields(out), " ") != "lo" {
		t.Errorf("network interfaces = %q, want only lo", out)
	}
	if out := e.mustExec(t, h.ID, "cat", "/proc/1/cmdline"); !strings.HasPrefix(out, "/.paddock/bin/paddock-shim\x00serve") {
		t.Errorf("PID 1 is %q, want the shim", out)
	}
	if out, code := e.execIn(t, h.ID, "sh", "-c", "echo x > /.paddock/bin/paddock-shim"); code == 0 {
		t.Errorf("the shim binary is writable from the sandbox: %s", out)
	}
}

// hostPidsMax reads the pids cgroup limit of the host process pid (cgroup
// v1, else v2).
func hostPidsMax(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) != 3:
		case slices.Contains(strings.Split(parts[1], ","), "pids"):
			return readTrimmed(t, filepath.Join("/sys/fs/cgroup/pids", parts[2], "pids.max"))
		case parts[0] == "0" && parts[1] == "":
			return readTrimmed(t, filepath.Join("/sys/fs/cgroup", parts[2], "pids.max"))
		}
	}
	t.Fatalf("no pids cgroup for pid %d:\n%s", pid, b)
	return ""
}

func readTrimmed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestWorkspaceSurvivesDestroy writes a file, destroys the sandbox, and
// reads the file from a new sandbox on the same workspace.
func TestWorkspaceSurvivesDestroy(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	first := e.started(t, spec)
	e.mustExecAsUser(t, first.ID, "sh", "-c", "echo kept > /workspace/notes.txt")
	if err := e.p.Destroy(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ContainerInspect(t.Context(), first.ID); !cerrdefs.IsNotFound(err) {
		t.Fatalf("container still exists after Destroy: %v", err)
	}
	var st struct {
		SocketDir string `json:"socket_dir"`
	}
	mustJSON(t, first.State, &st)
	if _, err := os.Stat(st.SocketDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket dir %s remains after Destroy: %v", st.SocketDir, err)
	}

	next := spec
	next.SandboxID = e.spec().SandboxID
	second := e.started(t, next)
	if out := e.mustExec(t, second.ID, "cat", "/workspace/notes.txt"); out != "kept\n" {
		t.Fatalf("file in the workspace = %q, want kept", out)
	}
	v, err := e.cli.VolumeInspect(t.Context(), spec.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if v.Labels[provider.LabelManaged] != "true" || v.Labels[provider.LabelInstance] != e.instance || v.Labels[provider.LabelWorkspace] != spec.RuntimeID {
		t.Fatalf("volume labels = %v", v.Labels)
	}
}

// TestUnknownRuntime: a provider whose OCI runtime the engine lacks says
// so, from Ping and from Create, and Create leaves nothing behind.
func TestUnknownRuntime(t *testing.T) {
	e := newEnv(t)
	e.flavour = flavour{name: "nowhere", runtime: "pdk-no-such-runtime"}
	p := e.provider(t, e.shim)
	_, createErr := p.Create(t.Context(), e.spec())
	for what, err := range map[string]error{"Ping": p.Ping(t.Context()), "Create": createErr} {
		if pe, ok := errdefs.Public(err); !ok || !errors.Is(err, errdefs.ErrFailedPrecondition) || pe.Code != docker.CodeRuntimeUnavailable {
			t.Errorf("%s = %v, want failed precondition %s", what, err, docker.CodeRuntimeUnavailable)
		}
	}
	if got, err := p.List(t.Context(), e.instance); err != nil || len(got) != 0 {
		t.Fatalf("List after the refused Create = %v, %v", got, err)
	}
	if ents, err := os.ReadDir(e.diskDir); err != nil || len(ents) != 0 {
		t.Fatalf("workspace disk left behind: %v %v", ents, err)
	}
}

// TestMissingImage checks that a missing image is image_not_found and
// leaves nothing behind: no container, no volume, no socket directory.
func TestMissingImage(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	spec.Image = "paddock/does-not-exist:" + spec.SandboxID[:8]
	_, err := e.p.Create(t.Context(), spec)
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrFailedPrecondition) || pe.Code != docker.CodeImageNotFound {
		t.Fatalf("Create = %v, want failed precondition %s", err, docker.CodeImageNotFound)
	}
	cs, err := e.cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", provider.LabelSandbox+"="+spec.SandboxID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 {
		t.Fatalf("%d containers left behind", len(cs))
	}
	if _, err := e.cli.VolumeInspect(t.Context(), spec.Workspace); !cerrdefs.IsNotFound(err) {
		t.Fatalf("workspace volume left behind: %v", err)
	}
	ents, err := os.ReadDir(e.runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if !strings.HasPrefix(ent.Name(), "paddock-shim-") { // the shim's copy stays
			t.Fatalf("run dir entry left behind: %s", ent.Name())
		}
	}
	if ents, err := os.ReadDir(e.diskDir); err != nil || len(ents) != 0 {
		t.Fatalf("workspace disk left behind: %v %v", ents, err)
	}
}

// TestStartFailsWhenEntrypointDies uses a "shim" that exits at once: Start
// must notice the exit, not wait out its timeout, and report the exit code
// and output in the cause only; on runc and under gVisor.
func TestStartFailsWhenEntrypointDies(t *testing.T) { eachFlavour(t, false, testEntrypointDies) }

func testEntrypointDies(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	// A static binary (the provider refuses anything else as a shim).
	dir := testenv.ShortTempDir(t)
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os\"\n\nfunc main() {\n\tos.Stderr.WriteString(\"shim exploded\\n\")\n\tos.Exit(3)\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad-shim")
	build := exec.Command("go", "build", "-o", bad, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the exploding shim: %v\n%s", err, out)
	}
	p := e.provider(t, bad)
	h, err := p.Create(t.Context(), e.spec())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(t.Context(), h)
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrFailedPrecondition) || pe.Code != docker.CodeSandboxExited {
		t.Fatalf("Start = %v, want failed precondition %s", err, docker.CodeSandboxExited)
	}
	if !strings.Contains(err.Error(), "code 3") || !strings.Contains(err.Error(), "shim exploded") {
		t.Fatalf("the cause lacks the exit code or the logs: %v", err)
	}
	if strings.Contains(pe.Message, "exploded") {
		t.Fatalf("container output leaked into the public message: %q", pe.Message)
	}
	st, err := p.Inspect(t.Context(), h)
	if err != nil || st.State != provider.StateStopped || st.ExitCode != 3 {
		t.Fatalf("Inspect after the failed start = %+v, %v", st, err)
	}
	if err := p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
}

// TestReattach acts on a sandbox from a second provider, as a restarted
// server does: with the persisted handle, and with a bare container id. A
// bare id lacks the agent's key, so it can inspect and destroy the sandbox
// but never talk to its agent.
func TestReattach(t *testing.T) {
	e := newEnv(t)
	h := e.started(t, e.spec())
	restarted := e.provider(t, e.shim)
	for _, tc := range []struct {
		name   string
		h      provider.Handle
		hasKey bool
	}{
		{"persisted handle", h, true},
		{"bare id", provider.Handle{ID: h.ID}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := restarted.Inspect(t.Context(), tc.h)
			if err != nil || st.State != provider.StateRunning {
				t.Fatalf("Inspect = %+v, %v", st, err)
			}
			conn, err := restarted.DialAgent(t.Context(), tc.h)
			if err == nil {
				err = providertest.CheckAgent(t.Context(), conn)
			}
			if tc.hasKey != (err == nil) {
				t.Fatalf("talking to the agent with a handle that has a key: %v; error: %v", tc.hasKey, err)
			}
			if !tc.hasKey {
				return
			}
			if err := restarted.Start(t.Context(), tc.h); err != nil {
				t.Fatalf("Start on a running sandbox: %v", err)
			}
		})
	}
	if err := restarted.Destroy(t.Context(), provider.Handle{ID: h.ID}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		SocketDir string `json:"socket_dir"`
	}
	mustJSON(t, h.State, &st)
	if _, err := os.Stat(st.SocketDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Destroy with a bare id left the socket dir: %v", err)
	}
}

// TestForeignObjectsUntouched checks that the provider refuses to act on a
// container or volume paddock does not manage.
func TestForeignObjectsUntouched(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	labels := map[string]string{testLabel: testenv.RunID}
	c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: "paddock/test-busybox:latest", Cmd: []string{"true"}, Labels: labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	h := provider.Handle{Provider: docker.Name, ID: c.ID}
	if err := e.p.Pause(ctx, h); !errdefs.IsNotFound(err) {
		t.Fatalf("Pause of a foreign container = %v, want not found", err)
	}
	if err := e.p.Start(ctx, h); !errdefs.IsNotFound(err) {
		t.Fatalf("Start of a foreign container = %v, want not found", err)
	}
	if err := e.p.Destroy(ctx, h); err != nil {
		t.Fatalf("Destroy of a foreign container = %v, want nil (nothing of ours)", err)
	}
	if _, err := e.cli.ContainerInspect(ctx, c.ID); err != nil {
		t.Fatalf("the foreign container was removed: %v", err)
	}

	name := "pdkforeign-" + testenv.RunID
	if _, err := e.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	if err := e.p.RemoveWorkspace(ctx, name); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("RemoveWorkspace of a foreign volume = %v, want failed precondition", err)
	}
	spec := e.spec()
	spec.Workspace = name
	if _, err := e.p.Create(ctx, spec); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Create on a foreign volume = %v, want failed precondition", err)
	}
	if _, err := e.cli.VolumeInspect(ctx, name); err != nil {
		t.Fatalf("the foreign volume was removed: %v", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	dir := testenv.ShortTempDir(t)
	shim := testenv.Binary(t, "paddock-shim")
	notELF := filepath.Join(dir, "shim")
	if err := os.WriteFile(notELF, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("d", 100))
	tests := []struct {
		name string
		cfg  docker.Config
		code string
	}{
		{"no shim", docker.Config{RunDir: dir}, "shim_path_required"},
		{"missing shim", docker.Config{ShimPath: filepath.Join(dir, "nope"), RunDir: dir}, "invalid_shim_path"},
		{"shim is a dir", docker.Config{ShimPath: dir, RunDir: dir}, "invalid_shim_path"},
		{"shim is not an executable", docker.Config{ShimPath: notELF, RunDir: dir}, "shim_not_static"},
		{"shim is dynamically linked", docker.Config{ShimPath: "/bin/sh", RunDir: dir}, "shim_not_static"},
		{"no run dir", docker.Config{ShimPath: shim}, "run_dir_required"},
		{"run dir too long", docker.Config{ShimPath: shim, RunDir: long}, "run_dir_too_long"},
		{"no disk dir", docker.Config{ShimPath: shim, RunDir: filepath.Join(dir, "run")}, "disk_dir_required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := docker.New(tc.cfg, nil)
			pe, ok := errdefs.Public(err)
			if !ok || !errors.Is(err, errdefs.ErrInvalidArgument) || pe.Code != tc.code {
				t.Fatalf("New = %v, want invalid argument %s", err, tc.code)
			}
		})
	}
	if _, err := os.Stat(long); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused run dir was created: %v", err)
	}
}

// TestEngineUnreachable maps a dead engine to unavailable, with no daemon
// text in the public message.
func TestEngineUnreachable(t *testing.T) {
	dir := testenv.ShortTempDir(t)
	shim := testenv.Binary(t, "paddock-shim")
	p, err := docker.New(docker.Config{Host: "unix://" + filepath.Join(dir, "no.sock"), Instance: "i", ShimPath: shim, RunDir: filepath.Join(dir, "run"), DiskDir: filepath.Join(dir, "disks")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	spec := provider.Spec{SandboxID: "s1", Instance: "i", Image: "img", Workspace: "ws1"}
	_, err = p.Create(t.Context(), spec)
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrUnavailable) || pe.Code != docker.CodeProviderUnavailable {
		t.Fatalf("Create = %v, want unavailable %s", err, docker.CodeProviderUnavailable)
	}
	if strings.Contains(pe.Message, "no.sock") {
		t.Fatalf("the public message leaks the engine's error: %q", pe.Message)
	}
	if err := p.Ping(t.Context()); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Ping = %v, want unavailable", err)
	}
}

// TestDefaultImage runs a sandbox on the default image built by
// scripts/build-images.sh and uses the tools it promises.
func TestDefaultImage(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	e := newEnv(t)
	spec := e.spec()
	spec.Image = testenv.DefaultImage
	h := e.started(t, spec)
	out := e.mustExecAsUser(t, h.ID, "bash", "-c", `set -e
		cd "$HOME" && git init -q repo && cd repo && echo hi > f && git add f
		python3 -c 'import ssl, json; print("py ok")'
		curl --version >/dev/null && test -s /etc/ssl/certs/ca-certificates.crt && echo tools ok`)
	if out != "py ok\ntools ok\n" {
		t.Fatalf("default image check printed %q", out)
	}
}

// TestCheckImageRemembers: CheckImage takes an image it found on the
// engine to be there still for a while, without asking the engine again
// (so an image removed by other hands meanwhile still passes: the start
// deals with it, TestDockerStartFailureLeavesNoContainer in e2e), asks
// again once that time is up, and forgets at once what a provider on the
// same engine removes, itself or another (runc's and gVisor's share an
// engine).
func TestCheckImageRemembers(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ref := "paddock/dk-seen-" + strings.ToLower(e.instance) + ":latest"
	// An image of this provider's (its labels), as a template build makes.
	commit := func() {
		t.Helper()
		c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: testenv.TestImage, Cmd: []string{"true"}, Labels: map[string]string{provider.LabelInstance: e.instance}}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		defer e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		if _, err := e.cli.ContainerCommit(ctx, c.ID, container.CommitOptions{Reference: ref, Changes: []string{
			"LABEL " + provider.LabelManaged + "=true " + provider.LabelInstance + "=" + e.instance,
		}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { e.cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })
	notFound := func(err error) bool {
		pe, ok := errdefs.Public(err)
		return ok && errdefs.IsNotFound(err) && pe.Code == docker.CodeImageNotFound
	}

	// Another provider on the same engine removes what this one saw.
	other := e.provider(t, e.shim)
	commit()
	if err := e.p.CheckImage(ctx, ref); err != nil {
		t.Fatalf("CheckImage of an image on the engine: %v", err)
	}
	if err := other.RemoveImage(ctx, ref); err != nil {
		t.Fatalf("RemoveImage: %v", err)
	}
	if err := e.p.CheckImage(ctx, ref); !notFound(err) {
		t.Fatalf("CheckImage of an image another provider on the engine removed: %v, want %s at once", err, docker.CodeImageNotFound)
	}

	// Removed by other hands: remembered (for an hour here, so the
	// machine's speed does not matter), then asked again once the time
	// is up. The memory is this provider's alone from here.
	docker.OwnSeenImages(e.p, time.Hour)
	commit()
	if err := e.p.CheckImage(ctx, ref); err != nil {
		t.Fatalf("CheckImage of an image on the engine again: %v", err)
	}
	if _, err := e.cli.ImageRemove(ctx, ref, image.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.p.CheckImage(ctx, ref); err != nil {
		t.Fatalf("CheckImage of an image seen a moment ago, removed by other hands since: %v, want it taken to be there", err)
	}
	docker.SetSeenImagesFor(e.p, 0)
	if err := e.p.CheckImage(ctx, ref); !notFound(err) {
		t.Fatalf("CheckImage once the time is up: %v, want %s", err, docker.CodeImageNotFound)
	}
}

// TestCheckImageRegistry: with pulls on, an image missing here whose
// registry cannot be reached answers 503 image_registry_unavailable (try
// again), not image_not_found; with pulls off it is not found without
// asking. The registry is a closed port on loopback.
func TestCheckImageRegistry(t *testing.T) {
	e := newEnv(t)
	p, err := docker.New(docker.Config{
		Name: e.flavour.name, Runtime: e.flavour.runtime, Instance: e.instance,
		ShimPath: e.shim, RunDir: e.runDir, DiskDir: e.diskDir,
		StartTimeout: 30 * time.Second, PullMissing: true,
	}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ref := closed + "/paddock-test/absent:latest"
	err = p.CheckImage(t.Context(), ref)
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrUnavailable) || pe.Code != docker.CodeImageRegistryUnavailable || pe.RetryAfter <= 0 {
		t.Fatalf("CheckImage(%s), registry down = %v, want unavailable %s", ref, err, docker.CodeImageRegistryUnavailable)
	}
	err = e.p.CheckImage(t.Context(), ref)
	if pe, ok := errdefs.Public(err); !ok || !errdefs.IsNotFound(err) || pe.Code != docker.CodeImageNotFound {
		t.Fatalf("CheckImage(%s), no pulls = %v, want not found", ref, err)
	}
}
