package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// shimPath is where every sandbox runs its agent's binary.
const shimPath = "/.paddock/bin/paddock-shim"

// runAsUser runs argv in rid's sandbox as its default user and answers
// its stdout, failing the test unless it exits 0.
func runAsUser(t *testing.T, sdk *pc.Client, rid string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("exec %q: %v", argv, err)
	}
	if res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec %q: %+v, stdout %q, stderr %q", argv, res.Exit, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// TestPreviewURLsInTheSandbox: in a sandbox of the default image, its
// default user's processes see PADDOCK_PREVIEW_URL_<PORT> for the ports
// the runtime declares and `paddock-shim url PORT` prints any port's:
// the very URLs the API hands out and the gateway serves. A port declared
// public answers 401 without credentials until something listens on it,
// then answers without any; a port not declared public stays private.
func TestPreviewURLsInTheSandbox(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	env, _, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "app",
		Runtime: &pc.RuntimeConfig{Image: testenv.DefaultImage, CPUMillis: 500, MemoryMB: 256,
			Ports: []pc.RuntimePort{{Port: 8080, Public: true}, {Port: 9090}}}}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	base := api.ShortID(p.RuntimeID) + ".localhost:" + portOfURL(env.URL)
	url := func(port int) string { return fmt.Sprintf("http://%d-%s/", port, base) }

	// What the sandbox is told, as its default user sees it.
	if who := strings.TrimSpace(runAsUser(t, sdk, p.RuntimeID, "id", "-un")); who != "user" {
		t.Fatalf("exec ran as %q, want the default user", who)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(runAsUser(t, sdk, p.RuntimeID, "env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "PADDOCK_PREVIEW_URL_") {
			vars[k] = v
		}
	}
	want := map[string]string{
		"PADDOCK_PREVIEW_URL_8080":     url(8080),
		"PADDOCK_PREVIEW_URL_9090":     url(9090),
		"PADDOCK_PREVIEW_URL_TEMPLATE": "http://{port}-" + base + "/",
	}
	if fmt.Sprint(vars) != fmt.Sprint(want) {
		t.Fatalf("the sandbox's preview variables %v, want %v", vars, want)
	}
	// The agent is on every process's PATH, so it is run by name.
	if got := runAsUser(t, sdk, p.RuntimeID, "sh", "-c", "command -v paddock-shim && paddock-shim url 4321"); got != shimPath+"\n"+url(4321)+"\n" {
		t.Fatalf("paddock-shim url 4321 by name printed %q, want %q then %q", got, shimPath, url(4321))
	}

	// Before anything listens, the port declared public is private.
	status := func(port int) string {
		return curl(t, "-o", "/dev/null", "-w", "%{http_code}", url(port))
	}
	if code := status(8080); code != "401" {
		t.Fatalf("the declared port before it listens: %s, want 401", code)
	}
	installWebserver(t, sdk, p.RuntimeID) // on 8080
	if _, err := sdk.Exec(t.Context(), "acme", "dev", p.RuntimeID, pc.ExecRequest{
		Argv: []string{"/workspace/webserver", "-addr", "127.0.0.1:9090"}, Background: true}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if out := curl(t, url(8080)); !strings.Contains(out, "hello from the sandbox") {
			return fmt.Errorf("the declared port without credentials: %q", out)
		}
		return nil
	})
	// The other port listens (a member reaches it) and stays private.
	testenv.Eventually(t, func() error {
		if out := curl(t, "-H", "Authorization: Bearer "+env.Key, url(9090)); !strings.Contains(out, "hello from the sandbox") {
			return fmt.Errorf("port 9090 with a key: %q", out)
		}
		return nil
	})
	if code := status(9090); code != "401" {
		t.Fatalf("the port not declared public, listening: %s, want 401", code)
	}
	// The API says the same, with the same URLs.
	var ports pc.List[pc.Port]
	env.Must(t, 200, "GET", rtPath+"/previews", nil).Decode(t, &ports)
	got := map[int]pc.Port{}
	for _, pt := range ports.Items {
		got[pt.Port] = pt
	}
	if pt := got[8080]; !pt.Public || !pt.Listening || pt.URL != url(8080) {
		t.Fatalf("port 8080 listed as %+v", pt)
	}
	if pt := got[9090]; pt.Public || !pt.Listening || pt.URL != url(9090) {
		t.Fatalf("port 9090 listed as %+v", pt)
	}
	// Made private by hand, it stays private while it listens.
	env.Must(t, 200, "PATCH", rtPath+"/previews/8080", pc.SetPortRequest{Public: false})
	if code := status(8080); code != "401" {
		t.Fatalf("the declared port made private: %s, want 401", code)
	}
}

// TestPreviewURLsInAClaimedWarmSandbox: a running warm sandbox, made
// before any runtime, learns its preview URLs when a runtime claims it.
func TestPreviewURLsInAClaimedWarmSandbox(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.DockerProvider(t, instance), Instance: instance, Image: testenv.TestImage,
		WarmPools: []runtime.WarmPool{{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Size: 1, Running: true}},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	ctx := t.Context()
	if made, err := env.Runtimes.FillWarmPools(ctx); err != nil || made != 1 {
		t.Fatalf("FillWarmPools = %d, %v; want 1", made, err)
	}
	warm, err := env.Store.ListWarmSandboxes(ctx)
	if err != nil || len(warm) != 1 {
		t.Fatalf("warm sandboxes: %d, %v", len(warm), err)
	}
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "app",
		Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Ports: []pc.RuntimePort{{Port: 3000}}}}).Decode(t, &p)
	var rt pc.Runtime
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil).Decode(t, &rt)
	if rt.CurrentSandboxID != warm[0].ID {
		t.Fatalf("the start made sandbox %s, not the warm %s", rt.CurrentSandboxID, warm[0].ID)
	}
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	base := api.ShortID(p.RuntimeID) + ".localhost:" + portOfURL(env.URL)
	if got, want := runAsUser(t, sdk, p.RuntimeID, "sh", "-c", "echo \"$PADDOCK_PREVIEW_URL_3000\""), "http://3000-"+base+"/\n"; got != want {
		t.Fatalf("PADDOCK_PREVIEW_URL_3000 in the claimed sandbox = %q, want %q", got, want)
	}
	if got, want := runAsUser(t, sdk, p.RuntimeID, shimPath, "url", "5173"), "http://5173-"+base+"/\n"; got != want {
		t.Fatalf("paddock-shim url 5173 in the claimed sandbox = %q, want %q", got, want)
	}
}
