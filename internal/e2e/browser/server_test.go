package browser

import (
	"net/http"
	"testing"

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

// serve starts a server on the real Docker engine (testenv.Serve), the
// console built into it.
func serve(t *testing.T) *server {
	t.Helper()
	requireConsole(t)
	live := testenv.Serve(t, testenv.ServeOptions{})
	s := &server{url: live.URL, key: live.Key, logs: live.Logs}
	sdk, err := pc.New(s.url, s.key)
	if err != nil {
		t.Fatal(err)
	}
	s.sdk = sdk
	return s
}

// waitReconciled waits until the server's start-up reconciliation is
// done (its readiness check passes), as a careful client would.
func (s *server) waitReconciled(t *testing.T) {
	t.Helper()
	testenv.WaitReconciled(t, s.url, s.logs)
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
