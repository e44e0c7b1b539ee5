package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/pkg/client"
)

// instanceEnv is a server in instance mode on acme/dev/svc, which its
// start makes, with a real agent (in this process) behind the fake
// provider and the SSH gateway's info mounted; and the runtime route
// of that runtime.
func instanceEnv(t *testing.T) (*servertest.Env, string) {
	t.Helper()
	dial := shimtest.Serve(t)
	key, err := sshgw.LoadHostKey(filepath.Join(t.TempDir(), sshgw.HostKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{
		Provider:     fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }}),
		InstanceMode: config.InstanceConfig{Instance: "acme/dev/svc"},
		Mount:        []api.Feature{api.SSH(sshgw.NewInfo("127.0.0.1:2222", key.PublicKey()))},
	})
	var p client.Project
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects/svc", nil).Decode(t, &p)
	return env, "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
}

// TestInstanceOperations: in instance mode /api/sandbox is the configured
// runtime: its start made org, workspace and project; start, exec, stop,
// resume, snapshot, secrets, ports (and the port proxy) and ssh act on
// that runtime, as its runtime routes see.
func TestInstanceOperations(t *testing.T) {
	env, rtPath := instanceEnv(t)
	var rt client.Runtime
	env.Must(t, 200, "GET", "/api/sandbox", nil).Decode(t, &rt)
	if want := rtPath[len(rtPath)-36:]; rt.ID != want {
		t.Fatalf("GET /api/sandbox is runtime %s, want acme/dev/svc's %s", rt.ID, want)
	}
	status := func() string {
		var got client.Runtime
		env.Must(t, 200, "GET", rtPath, nil).Decode(t, &got)
		return got.Status
	}
	env.Must(t, 200, "POST", "/api/sandbox/start", nil)
	var res client.ExecResult
	env.Must(t, 200, "POST", "/api/sandbox/exec", client.ExecRequest{Argv: []string{"sh", "-c", "echo instance"}}).Decode(t, &res)
	if string(res.Stdout) != "instance\n" || res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec: %+v", res)
	}
	env.Must(t, 200, "POST", "/api/sandbox/stop", nil)
	if s := status(); s != client.RuntimePaused {
		t.Fatalf("after stop the runtime is %s, want paused", s)
	}
	env.Must(t, 200, "POST", "/api/sandbox/resume", nil)
	if s := status(); s != client.RuntimeRunning {
		t.Fatalf("after resume the runtime is %s, want running", s)
	}

	var snap client.Snapshot
	env.Must(t, 201, "POST", "/api/sandbox/snapshot", client.CreateSnapshotRequest{Name: "first"}).Decode(t, &snap)
	if snap.RuntimeID != rt.ID {
		t.Fatalf("snapshot of runtime %s, want %s", snap.RuntimeID, rt.ID)
	}
	var snaps client.List[client.Snapshot]
	env.Must(t, 200, "GET", rtPath+"/snapshots", nil).Decode(t, &snaps)
	if len(snaps.Items) != 1 || snaps.Items[0].ID != snap.ID {
		t.Fatalf("the runtime's snapshots: %+v", snaps.Items)
	}
	env.Must(t, 200, "GET", "/api/sandbox/snapshots", nil).Decode(t, &snaps)
	if len(snaps.Items) != 1 || snaps.Items[0].ID != snap.ID {
		t.Fatalf("the instance's snapshots: %+v", snaps.Items)
	}

	instanceSecrets(t, env, rtPath)
	instancePorts(t, env, rtPath)

	var ssh client.RuntimeSSH
	env.Must(t, 200, "GET", "/api/sandbox/ssh", nil).Decode(t, &ssh)
	if ssh.User != rt.ID || ssh.Address != "127.0.0.1:2222" || ssh.HostKey == "" || ssh.Command != "ssh -p 2222 "+rt.ID+"@127.0.0.1" {
		t.Fatalf("ssh: %+v", ssh)
	}
}

// instanceSecrets: /api/sandbox/secrets binds, lists and unbinds the
// runtime's secrets.
func instanceSecrets(t *testing.T, env *servertest.Env, rtPath string) {
	t.Helper()
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", client.CreateSecretRequest{Name: "tok", Value: "v"})
	wantError(t, env.Do(t, "PUT", "/api/sandbox/secrets/nope", nil), 404, "secret_not_found")
	var up client.RuntimeUpdate
	env.Must(t, 200, "PUT", "/api/sandbox/secrets/tok", nil).Decode(t, &up)
	if !slices.Equal(up.Runtime.Config.Secrets, []string{"tok"}) || !slices.Equal(up.NextStart, []string{"secrets"}) {
		t.Fatalf("bind: %+v", up)
	}
	env.Must(t, 200, "PUT", "/api/sandbox/secrets/tok", nil) // bound already: nothing changes
	var bound client.RuntimeSecrets
	env.Must(t, 200, "GET", rtPath+"/secrets", nil).Decode(t, &bound)
	if !slices.Equal(bound.Secrets, []string{"tok"}) {
		t.Fatalf("the runtime's secrets: %v", bound.Secrets)
	}
	env.Must(t, 200, "DELETE", "/api/sandbox/secrets/tok", nil)
	env.Must(t, 200, "GET", "/api/sandbox/secrets", nil).Decode(t, &bound)
	if len(bound.Secrets) != 0 {
		t.Fatalf("after unbind: %v", bound.Secrets)
	}
	wantError(t, env.Do(t, "DELETE", "/api/sandbox/secrets/tok", nil), 404, "secret_not_bound")
}

// instancePorts: a port opened through /api/sandbox/previews is public on
// the runtime, and /api/sandbox/ports/{port}/ reaches its server.
func instancePorts(t *testing.T, env *servertest.Env, rtPath string) {
	t.Helper()
	app := newLoopbackApp(t)
	port := app.Listener.Addr().(*net.TCPAddr).Port
	var p client.Port
	env.Must(t, 200, "PATCH", fmt.Sprintf("/api/sandbox/previews/%d", port), client.SetPortRequest{Public: true}).Decode(t, &p)
	if !p.Public || p.Port != port {
		t.Fatalf("open: %+v", p)
	}
	var ports client.PortList
	env.Must(t, 200, "GET", rtPath+"/previews", nil).Decode(t, &ports)
	if !slices.ContainsFunc(ports.Items, func(q client.Port) bool { return q.Port == port && q.Public && q.Listening }) {
		t.Fatalf("the runtime's ports: %+v", ports.Items)
	}
	req, err := http.NewRequestWithContext(t.Context(), "GET", fmt.Sprintf("%s/api/sandbox/ports/%d/hello", env.URL, port), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "app at /hello" {
		t.Fatalf("the port proxy: %d %s", resp.StatusCode, b)
	}
	env.Must(t, 200, "PATCH", fmt.Sprintf("/api/sandbox/previews/%d", port), client.SetPortRequest{Public: false})

	// A private port: a preview token from /api/sandbox reaches it at its
	// preview host without a key.
	host := fmt.Sprintf("%d-%s.localhost:%s", port, api.ShortID(strings.TrimPrefix(rtPath, "/api/v1/org/acme/ws/dev/runtimes/")), env.URL[strings.LastIndex(env.URL, ":")+1:])
	if a := previewCall(t, env, host, "/hello", nil); a.status != 401 {
		t.Fatalf("a private port without a token: %d %s", a.status, a.body)
	}
	var tok client.PreviewToken
	env.Must(t, 201, "POST", fmt.Sprintf("/api/sandbox/previews/%d/token", port), nil).Decode(t, &tok)
	if tok.Token == "" || !strings.Contains(tok.URL, fmt.Sprint(port)) {
		t.Fatalf("token: %+v", tok)
	}
	if a := previewCall(t, env, host, "/hello", []string{"X-Paddock-Preview-Token", tok.Token}); a.status != 200 || string(a.body) != "app at /hello" {
		t.Fatalf("the preview host with the instance's token: %d %s", a.status, a.body)
	}
}

// TestInstanceCallers: a wallet session and an API key of the instance's
// org act on it with their roles; another org's admin is not found; a
// viewer may look but not exec.
func TestInstanceCallers(t *testing.T) {
	env, _ := instanceEnv(t)
	env.Must(t, 200, "POST", "/api/sandbox/start", nil)
	exec := client.ExecRequest{Argv: []string{"true"}}

	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: addr})
	var ch client.AuthChallenge
	env.MustKey(t, "", 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &ch)
	var sess client.AuthSession
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)}).Decode(t, &sess)
	env.MustKey(t, sess.Token, 200, "POST", "/api/sandbox/exec", exec)
	env.MustKey(t, sess.Token, 200, "GET", "/api/sandbox", nil)

	join := func(org, who, role string) {
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/members", client.AddOrgMemberRequest{Member: who, Role: role})
		if org == "acme" {
			env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: who})
		}
	}
	join("acme", "m@example.com", "member")
	member := keyFor2(t, env, "acme", client.CreateKeyRequest{Member: "m@example.com", Role: "member"})
	env.MustKey(t, member.Key, 200, "POST", "/api/sandbox/exec", exec)
	wantError(t, env.DoKey(t, member.Key, "PUT", "/api/sandbox/secrets/x", nil), 403, "role_too_low")

	join("acme", "v@example.com", "viewer")
	viewer := keyFor2(t, env, "acme", client.CreateKeyRequest{Member: "v@example.com", Role: "viewer"})
	env.MustKey(t, viewer.Key, 200, "GET", "/api/sandbox", nil)
	wantError(t, env.DoKey(t, viewer.Key, "POST", "/api/sandbox/exec", exec), 403, "role_too_low")

	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	join("other", "o@example.com", "admin")
	foreign := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "o@example.com", Role: "admin"})
	for _, c := range []struct{ method, path string }{{"GET", "/api/sandbox"}, {"POST", "/api/sandbox/exec"}, {"POST", "/api/sandbox/stop"}, {"GET", "/api/sandbox/snapshots"}} {
		var body any
		if c.method == "POST" && c.path == "/api/sandbox/exec" {
			body = exec
		}
		wantError(t, env.DoKey(t, foreign.Key, c.method, c.path, body), 404, "org_not_found")
	}
	wantError(t, env.DoKey(t, "", "GET", "/api/sandbox", nil), 401, "missing_api_key")
}

// TestInstanceUnconfigured: without the instance setting there is no
// /api/sandbox: each operation, and the port proxy, is 404.
func TestInstanceUnconfigured(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	for _, c := range []struct{ method, path string }{{"GET", "/api/sandbox"}, {"POST", "/api/sandbox/exec"}, {"POST", "/api/sandbox/stop"}, {"GET", "/api/sandbox/secrets"}, {"GET", "/api/sandbox/ports/8080/"}} {
		wantError(t, env.Do(t, c.method, c.path, nil), 404, "route_not_found")
	}
	for _, rt := range env.API.Routes() {
		if strings.HasPrefix(rt.Pattern, "/api/sandbox") {
			t.Errorf("route %s %s without instance mode", rt.Method, rt.Pattern)
		}
	}
}

// newLoopbackApp serves "app at <path>" on a loopback port, which the
// in-process agent's sandbox shares.
func newLoopbackApp(t *testing.T) *httptest.Server {
	t.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app at %s", r.URL.Path)
	}))
	t.Cleanup(app.Close)
	return app
}

// TestInstanceFromTemplate: a start in instance mode whose project does
// not exist makes it from instance_template; a later start finds it and
// makes nothing.
func TestInstanceFromTemplate(t *testing.T) {
	dir := t.TempDir()
	t.Run("before", func(t *testing.T) {
		env := servertest.New(t, servertest.Options{DataDir: dir})
		env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/templates", client.CreateTemplateRequest{Name: "svc-tpl", Runtime: &client.RuntimeConfig{CPUMillis: 1500, IdleTimeoutSeconds: 777}})
	})
	mode := config.InstanceConfig{Instance: "acme/dev/svc", InstanceTemplate: "svc-tpl"}
	var first client.Runtime
	t.Run("made", func(t *testing.T) {
		env := servertest.New(t, servertest.Options{DataDir: dir, InstanceMode: mode})
		env.Must(t, 200, "GET", "/api/sandbox", nil).Decode(t, &first)
		if first.Config.CPUMillis != 1500 || first.Config.IdleTimeoutSeconds != 777 {
			t.Fatalf("the instance's runtime is not the template's: %+v", first.Config)
		}
	})
	env := servertest.New(t, servertest.Options{DataDir: dir, InstanceMode: mode})
	var again client.Runtime
	env.Must(t, 200, "GET", "/api/sandbox", nil).Decode(t, &again)
	var projects client.List[client.Project]
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects", nil).Decode(t, &projects)
	if again.ID != first.ID || len(projects.Items) != 1 {
		t.Fatalf("a second start serves %s (first %s), projects %+v", again.ID, first.ID, projects.Items)
	}
}

// TestRuntimeSecretBindsAtOnce: binds of different secrets to one runtime
// at the same time all hold: each applies to the bindings as written.
func TestRuntimeSecretBindsAtOnce(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("s%d", i))
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", client.CreateSecretRequest{Name: names[i], Value: "v"})
	}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			if r := env.Do(t, "PUT", rtPath+"/secrets/"+n, nil); r.Status != 200 {
				t.Errorf("bind %s: %d %s", n, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	var bound client.RuntimeSecrets
	env.Must(t, 200, "GET", rtPath+"/secrets", nil).Decode(t, &bound)
	if got := slices.Sorted(slices.Values(bound.Secrets)); !slices.Equal(got, names) {
		t.Fatalf("bound at once: %v, want %v", got, names)
	}
}

// TestInstanceNotReady: until the server has found the instance's
// runtime, its routes and port proxy answer 503 instance_not_ready.
func TestInstanceNotReady(t *testing.T) {
	a := api.New(api.Config{Tenancy: tenancy.New(tenancy.Config{})})
	a.Mount(api.Instance(noInstance))
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	for _, p := range []string{"/api/sandbox", "/api/sandbox/ports/8080/"} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res := send(t, req); res.Status != http.StatusServiceUnavailable || res.Code() != "instance_not_ready" {
			t.Errorf("GET %s before the instance is known: %d %s", p, res.Status, res.Body)
		}
	}
}
