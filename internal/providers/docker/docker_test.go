package docker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// instancePrefix prefixes every instance label this process uses.
var instancePrefix = "pdktest-" + testenv.RunID

// testLabel marks containers and volumes the tests make without the
// provider (foreign ones), for the sweep.
const testLabel = "dev.paddock.test-run"

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinaries()
	if err := sweep(instancePrefix); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// instanceOf is the instance label for a test.
func instanceOf(t *testing.T) string { return instancePrefix + "-" + t.Name() }

// flavour is a way the provider runs sandboxes: on the engine's default
// runtime (runc), or under gVisor.
type flavour struct {
	name    string // the provider's registry name; "" means docker.Name
	runtime string // the OCI runtime; "" means the engine's default
}

var (
	runc   = flavour{}
	gvisor = flavour{name: "gvisor", runtime: testenv.GVisorRuntime}
)

// String names the flavour's subtests.
func (f flavour) String() string {
	if f.runtime == "" {
		return "runc"
	}
	return f.name
}

// eachFlavour runs test once on runc and once under gVisor, as subtests
// named after them. parallel runs the two at once, for tests that spend
// their time waiting (probes that time out), not computing.
func eachFlavour(t *testing.T, parallel bool, test func(t *testing.T, f flavour)) {
	for _, f := range []flavour{runc, gvisor} {
		t.Run(f.String(), func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			test(t, f)
		})
	}
}

// env is what a test needs to drive the provider and check on it.
type env struct {
	p        *docker.Provider
	cli      *client.Client
	flavour  flavour
	instance string
	shim     string
	runDir   string
	diskDir  string
}

// newEnv is newFlavourEnv on runc.
func newEnv(t *testing.T) *env { return newFlavourEnv(t, runc) }

// newFlavourEnv skips (or fails, in CI) without Docker, the test image or
// the flavour's runtime, builds the shim, and returns a provider of the
// flavour labelled with this test's instance. Everything carrying the
// instance is removed when the test ends, even on failure.
func newFlavourEnv(t *testing.T, f flavour) *env {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	if f.runtime != "" {
		testenv.RequireRuntime(t, f.runtime)
	}
	e := &env{flavour: f, instance: instanceOf(t), shim: testenv.Binary(t, "paddock-shim")}
	e.runDir = testenv.ShortTempDir(t)
	e.diskDir = testenv.DiskDir(t)
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	e.cli = cli
	e.p = e.provider(t, e.shim)
	t.Cleanup(func() {
		if err := sweep(e.instance); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})
	return e
}

// provider returns another provider of the same flavour on the same
// instance and run directory, with the given shim.
func (e *env) provider(t *testing.T, shim string) *docker.Provider {
	t.Helper()
	p, err := docker.New(docker.Config{
		Name:         e.flavour.name,
		Runtime:      e.flavour.runtime,
		Instance:     e.instance,
		ShimPath:     shim,
		RunDir:       e.runDir,
		DiskDir:      e.diskDir,
		StartTimeout: 30 * time.Second,
	}, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("docker.New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// spec returns a valid spec on the test image.
func (e *env) spec() provider.Spec {
	return provider.Spec{
		SandboxID: uuid.NewString(),
		RuntimeID: uuid.NewString(),
		OrgID:     uuid.NewString(),
		Instance:  e.instance,
		Image:     testenv.TestImage,
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 64, PidsLimit: 64, DiskMB: 32, TmpMB: 32},
		Workspace: "pdkws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
	}
}

// sweep force-removes every container, volume and image whose instance
// label starts with prefix, and everything marked with testLabel=RunID.
func sweep(prefix string) error {
	if err := testenv.Sweep(provider.LabelInstance, prefix); err != nil {
		return err
	}
	return testenv.Sweep(testLabel, testenv.RunID)
}

func TestConformance(t *testing.T) { conformance(t, runc) }

// TestConformanceGVisor runs the suite again with every sandbox under
// gVisor.
func TestConformanceGVisor(t *testing.T) { conformance(t, gvisor) }

func conformance(t *testing.T, f flavour) {
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) provider.Provider { return newFlavourEnv(t, f).p },
		Spec: func(t *testing.T) provider.Spec {
			s := (&env{instance: instanceOf(t)}).spec()
			return s
		},
		WorkspaceExists: func(t *testing.T, _ provider.Provider, name string) bool {
			cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			_, err = cli.VolumeInspect(t.Context(), name)
			if err != nil && !cerrdefs.IsNotFound(err) {
				t.Fatalf("volume inspect: %v", err)
			}
			return err == nil
		},
	})
}

// execIn runs cmd in a running container and returns its output and exit
// code.
func (e *env) execIn(t *testing.T, id string, cmd ...string) (string, int) {
	t.Helper()
	return e.execAs(t, id, "", cmd...)
}

// execAsUser is execIn as the sandbox's user (uid 1000), as its processes
// run by default.
func (e *env) execAsUser(t *testing.T, id string, cmd ...string) (string, int) {
	t.Helper()
	return e.execAs(t, id, "1000:1000", cmd...)
}

// mustExecAsUser is mustExec as the sandbox's user.
func (e *env) mustExecAsUser(t *testing.T, id string, cmd ...string) string {
	t.Helper()
	out, code := e.execAsUser(t, id, cmd...)
	if code != 0 {
		t.Fatalf("%v exited %d: %s", cmd, code, out)
	}
	return out
}

func (e *env) execAs(t *testing.T, id, user string, cmd ...string) (string, int) {
	t.Helper()
	ctx := t.Context()
	ec, err := e.execCreate(ctx, id, container.ExecOptions{Cmd: cmd, User: user, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatalf("exec create %v: %v", cmd, err)
	}
	resp, err := e.cli.ContainerExecAttach(ctx, ec.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatalf("exec attach %v: %v", cmd, err)
	}
	defer resp.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, resp.Reader); err != nil {
		t.Fatalf("exec output %v: %v", cmd, err)
	}
	ins, err := e.cli.ContainerExecInspect(ctx, ec.ID)
	if err != nil {
		t.Fatalf("exec inspect %v: %v", cmd, err)
	}
	return out.String(), ins.ExitCode
}

// mustExec runs cmd and fails the test unless it exits 0.
// execCreate creates an engine exec. The engine records a pause from its
// event stream as well as from the call, so a "paused" event that arrives
// after a resume sets its flag again until the "resumed" event follows; an
// exec in that window is refused. The sandbox runs (the freezer says so), so
// the refusal is retried, bounded, until the engine catches up.
func (e *env) execCreate(ctx context.Context, id string, opts container.ExecOptions) (container.ExecCreateResponse, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ec, err := e.cli.ContainerExecCreate(ctx, id, opts)
		if err == nil || !cerrdefs.IsConflict(err) || !strings.Contains(err.Error(), "is paused") || time.Now().After(deadline) {
			return ec, err
		}
		st, serr := e.p.Inspect(ctx, provider.Handle{ID: id})
		if serr != nil || st.State != provider.StateRunning {
			return ec, err
		}
		select {
		case <-ctx.Done():
			return ec, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (e *env) mustExec(t *testing.T, id string, cmd ...string) string {
	t.Helper()
	out, code := e.execIn(t, id, cmd...)
	if code != 0 {
		t.Fatalf("%v exited %d: %s", cmd, code, out)
	}
	return out
}

// started creates and starts a sandbox for spec.
func (e *env) started(t *testing.T, spec provider.Spec) provider.Handle {
	t.Helper()
	h, err := e.p.Create(t.Context(), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := e.p.Start(t.Context(), h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return h
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}
