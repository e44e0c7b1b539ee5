package browser

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// server is a `paddock serve` a test started on the real Docker engine:
// the console at / of its API listener, as a user runs it.
type server struct {
	url  string
	key  string // the installation admin's key (PADDOCK_BOOTSTRAP_KEY)
	sdk  *pc.Client
	logs *testenv.Buffer
}

// serve builds the binaries (once per test binary), starts a server on a
// data directory of the test's, waits until it is ready, and stops it and
// sweeps what it made in Docker when the test ends.
func serve(t *testing.T) *server {
	t.Helper()
	requireConsole(t)
	testenv.RequireDocker(t, testenv.TestImage)
	bin, shim := testenv.Binary(t, "paddock"), testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data := t.TempDir()
	t.Cleanup(func() { testenv.UnmountUnder(data) })
	key := newKey(t)
	cmd := exec.Command(bin, "serve",
		"--listen", "127.0.0.1:0",
		"--data-dir", data,
		"--run-dir", filepath.Join(testenv.ShortTempDir(t), "r"),
		"--shim-path", shim,
		"--default-image", testenv.TestImage,
		"--pull-images=false")
	cmd.Env = append(os.Environ(), "PADDOCK_BOOTSTRAP_KEY="+key, "PADDOCK_INSTANCE_ID="+instance,
		"PADDOCK_LOG_LEVEL=warn", "PADDOCK_EGRESS_DISABLED=true", "PADDOCK_SSH_LISTEN=off")
	s := &server{key: key, logs: new(testenv.Buffer)}
	s.url = start(t, cmd, s.logs)
	sdk, err := pc.New(s.url, key)
	if err != nil {
		t.Fatal(err)
	}
	s.sdk = sdk
	s.waitReconciled(t)
	return s
}

// waitReconciled waits until the server's start-up reconciliation is
// done (its readiness check passes), as a careful client would.
func (s *server) waitReconciled(t *testing.T) {
	t.Helper()
	testenv.WaitReconciled(t, s.url, s.logs)
}

// start runs cmd and returns the URL it prints once it listens; the
// process is killed (by its pid) and reaped when the test ends.
func start(t *testing.T, cmd *exec.Cmd, logs *testenv.Buffer) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "paddock listening on "); ok {
				urls <- strings.Fields(rest)[0]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("paddock serve exited before it listened: %v\n%s", err, logs)
	case <-time.After(testenv.Patience):
		t.Fatalf("paddock serve did not listen within %v\n%s", testenv.Patience, logs)
	}
	return ""
}

// newKey is a fresh installation admin key for PADDOCK_BOOTSTRAP_KEY.
func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "pdk_" + hex.EncodeToString(b)
}

// fleet is an org with a workspace named default and projects in it.
type fleet struct {
	org, ws  string
	runtimes map[string]string // project name → runtime id
}

// newFleet creates org (with workspace default) and a small project per
// name, its runtime stopped.
func (s *server) newFleet(t *testing.T, org string, projects ...string) fleet {
	t.Helper()
	ctx := t.Context()
	if _, err := s.sdk.CreateOrg(ctx, pc.CreateOrgRequest{Name: org}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sdk.CreateWorkspace(ctx, org, pc.CreateWorkspaceRequest{Name: "default"}); err != nil {
		t.Fatal(err)
	}
	f := fleet{org: org, ws: "default", runtimes: map[string]string{}}
	for _, name := range projects {
		p, err := s.sdk.CreateProject(ctx, org, f.ws, pc.CreateProjectRequest{
			Name:    name,
			Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64},
		})
		if err != nil {
			t.Fatal(err)
		}
		f.runtimes[name] = p.RuntimeID
	}
	return f
}

// path is the console's path of a page of the fleet's workspace.
func (f fleet) path(page string) string {
	return "/o/" + f.org + "/w/" + f.ws + "/" + page
}

// runtime is the API's view of a runtime of the fleet.
func (s *server) runtime(t *testing.T, f fleet, name string) pc.Runtime {
	t.Helper()
	rt, err := s.sdk.GetRuntime(t.Context(), f.org, f.ws, f.runtimes[name])
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// startRuntime starts a runtime of the fleet through the API.
func (s *server) startRuntime(t *testing.T, f fleet, name string) pc.Runtime {
	t.Helper()
	rt, err := s.sdk.StartRuntime(t.Context(), f.org, f.ws, f.runtimes[name], pc.StartRuntimeRequest{})
	if err != nil {
		t.Fatalf("start %s: %v\n%s", name, err, s.logs)
	}
	return rt
}

// memberKey adds member to the fleet's org and workspace with role and
// returns a key of theirs.
func (s *server) memberKey(t *testing.T, f fleet, member, role string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := s.sdk.AddOrgMember(ctx, f.org, pc.AddOrgMemberRequest{Member: member, Role: role}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sdk.AddMember(ctx, f.org, f.ws, pc.AddMemberRequest{Member: member}); err != nil {
		t.Fatal(err)
	}
	k, err := s.sdk.CreateKey(ctx, f.org, pc.CreateKeyRequest{Member: member, Name: role})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// get is an HTTP GET of the server's with headers, answering the status.
func (s *server) get(t *testing.T, path string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
