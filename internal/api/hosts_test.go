package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

const hostsPath = "/api/v1/org/acme/hosts"

// machineEnv is a server whose agent binary machines can run, with orgs
// acme and other (workspace dev in each), and a machine for them.
func machineEnv(t *testing.T) (*servertest.Env, *testenv.SSHHost) {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	m.Engine.LoadImage(t, testenv.TestImage)
	return serverFor(t), m
}

// serverFor is a server whose agent binary machines can run, with orgs
// acme and other (workspace dev in each).
func serverFor(t *testing.T) *servertest.Env {
	t.Helper()
	env := servertest.New(t, servertest.Options{ShimPath: testenv.Binary(t, "paddock-shim"), Image: testenv.TestImage})
	for _, org := range []string{"acme", "other"} {
		env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: org})
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/ws", client.CreateWorkspaceRequest{Name: "dev"})
	}
	return env
}

// addHostRequest registers m as name.
func addHostRequest(t *testing.T, m *testenv.SSHHost, name string) client.AddHostRequest {
	t.Helper()
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return client.AddHostRequest{
		Name: name, Address: m.Addr, User: "root", PrivateKey: string(key), HostKey: m.HostKey,
		DockerSocket: m.Socket, RunDir: filepath.Join(m.Dir, "run"), DiskDir: filepath.Join(m.Dir, "disks"),
	}
}

// otherSSHKey is a new ed25519 key: its private half in OpenSSH's format,
// and its public half as authorized_keys writes it.
func otherSSHKey(t *testing.T) (private, public string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block)), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
}

// TestHostRegistrationChecksTheMachine: a machine is registered only when
// its host key is pinned and is the one it shows, and the key logs in;
// each refusal stores nothing.
func TestHostRegistrationChecksTheMachine(t *testing.T) {
	env, m := machineEnv(t)
	priv, pub := otherSSHKey(t)
	for _, c := range []struct {
		name   string
		edit   func(r *client.AddHostRequest)
		status int
		code   string
	}{
		{"nothing pinned", func(r *client.AddHostRequest) { r.HostKey = "" }, 400, "host_key_required"},
		{"a host key that is none", func(r *client.AddHostRequest) { r.HostKey = "ssh-ed25519 nonsense" }, 400, "invalid_host_key"},
		{"a private key that is none", func(r *client.AddHostRequest) { r.PrivateKey = "nonsense" }, 400, "invalid_host_private_key"},
		{"another host key", func(r *client.AddHostRequest) { r.HostKey = pub }, 422, "ssh_host_key_changed"},
		{"a key the machine refuses", func(r *client.AddHostRequest) { r.PrivateKey = priv }, 422, "ssh_auth_failed"},
		{"no engine there", func(r *client.AddHostRequest) { r.DockerSocket = "/nonexistent.sock" }, 422, "host_unreachable"},
		{"a name of the installation's providers", func(r *client.AddHostRequest) { r.Name = env.Provider.Name() }, 409, "host_exists"},
		{"a name like a provider's", func(r *client.AddHostRequest) { r.Name = "host-x" }, 400, "invalid_host_name"},
		{"this server's loopback", func(r *client.AddHostRequest) { r.Address = strings.TrimPrefix(env.URL, "http://") }, 422, "host_address_refused"},
		{"the metadata service", func(r *client.AddHostRequest) { r.Address = "169.254.169.254" }, 422, "host_address_refused"},
		{"a name for loopback", func(r *client.AddHostRequest) { r.Address = "localhost:22" }, 422, "host_address_refused"},
		{"this host's own end of the pair", func(r *client.AddHostRequest) { r.Address = m.LocalIP + ":22" }, 422, "host_address_refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := addHostRequest(t, m, "box")
			c.edit(&req)
			r := env.Do(t, "POST", hostsPath, req)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("status %d %s, want %d %s: %s", r.Status, r.Code(), c.status, c.code, r.Body)
			}
		})
	}
	var list client.List[client.Host]
	env.Must(t, 200, "GET", hostsPath, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("refused registrations stored %+v", list.Items)
	}
}

// TestHostIsTheOrgsProvider: a registered machine runs its org's
// runtimes, named by the provider choice or metadata_json's
// runtime_backend; to another org it is unknown, its key is never
// answered, and it cannot be removed while a sandbox is on it.
func TestHostIsTheOrgsProvider(t *testing.T) {
	env, m := machineEnv(t)
	req := addHostRequest(t, m, "box")
	var h client.Host
	body := env.Must(t, 201, "POST", hostsPath, req)
	body.Decode(t, &h)
	if h.Name != "box" || h.Address != m.Addr || h.HostKey != m.HostKey || !strings.HasPrefix(h.HostKeyFingerprint, "SHA256:") || h.Provider != "host-"+h.ID {
		t.Fatalf("registered %+v", h)
	}
	if strings.Contains(string(body.Body), "PRIVATE KEY") {
		t.Fatalf("the answer holds the private key: %s", body.Body)
	}
	env.Must(t, 409, "POST", hostsPath, req)
	// The installation's listings do not show an org's machine.
	var caps client.Capabilities
	env.Must(t, 200, "GET", "/api/capabilities", nil).Decode(t, &caps)
	if _, ok := caps.Providers[h.Provider]; ok || len(caps.Providers) != 1 {
		t.Fatalf("capabilities list %v", caps.Providers)
	}
	var got client.Host
	env.Must(t, 200, "GET", hostsPath+"/box", nil).Decode(t, &got)
	if got.ID != h.ID {
		t.Fatalf("get = %+v, want %+v", got, h)
	}
	if r := env.Do(t, "GET", "/api/v1/org/other/hosts/box", nil); r.Status != 404 || r.Code() != "host_not_found" {
		t.Fatalf("another org's host: %d %s", r.Status, r.Body)
	}

	// Another org names it: unknown, by its name or its provider's.
	for _, name := range []string{"box", h.Provider} {
		r := env.Do(t, "POST", "/api/v1/org/other/ws/dev/projects", client.CreateProjectRequest{Name: "p", Runtime: &client.RuntimeConfig{Provider: name}})
		if r.Status != 400 || r.Code() != "unknown_provider" {
			t.Fatalf("another org naming %s: %d %s", name, r.Status, r.Body)
		}
	}

	// Its own org runs a runtime there.
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p",
		Runtime: &client.RuntimeConfig{MetadataJSON: `{"runtime_backend":"box"}`, MemoryMB: 128, PidsLimit: 64, DiskMB: 64}}).Decode(t, &p)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rt+"/start", client.StartRuntimeRequest{})
	var res client.ExecResult
	env.Must(t, 200, "POST", rt+"/exec", client.ExecRequest{Argv: []string{"sh", "-c", "echo hi"}}).Decode(t, &res)
	if strings.TrimSpace(string(res.Stdout)) != "hi" {
		t.Fatalf("exec on the machine said %q", res.Stdout)
	}
	if n := m.Engine.Containers(t, p.RuntimeID); n != 1 {
		t.Fatalf("%d containers of the runtime on the machine's engine, want 1", n)
	}

	if r := env.Do(t, "DELETE", hostsPath+"/box", nil); r.Status != 409 || r.Code() != "host_in_use" {
		t.Fatalf("removing a machine in use: %d %s", r.Status, r.Body)
	}
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p", nil)
	testenv.Eventually(t, func() error {
		if n := m.Engine.Containers(t, p.RuntimeID); n != 0 {
			return fmt.Errorf("%d containers left on the machine", n)
		}
		return nil
	})
	env.Must(t, 204, "DELETE", hostsPath+"/box", nil)
	env.Must(t, 404, "GET", hostsPath+"/box", nil)
	if r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "q", Runtime: &client.RuntimeConfig{Provider: "box"}}); r.Code() != "unknown_provider" {
		t.Fatalf("a removed machine: %d %s", r.Status, r.Body)
	}
}

// TestBareHost: a machine registered in bare mode (sshd only, root)
// runs its org's runtimes as the agent in namespaces of its own, never
// as a container of an engine; a mode that is none, or a bare machine
// given an engine's socket, is refused; and a login other than root is
// refused before anything is stored.
func TestBareHost(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	env := serverFor(t)
	for _, c := range []struct {
		name string
		edit func(r *client.AddHostRequest)
	}{
		{"a mode that is none", func(r *client.AddHostRequest) { r.Mode = "vm" }},
		{"a bare machine with an engine", func(r *client.AddHostRequest) { r.Mode = "bare" }},
	} {
		req := addHostRequest(t, m, "metal")
		c.edit(&req)
		if r := env.Do(t, "POST", hostsPath, req); r.Status != 400 || r.Code() != "invalid_host_mode" {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}

	req := addHostRequest(t, m, "metal")
	req.Mode, req.DockerSocket = "bare", ""
	var h client.Host
	env.Must(t, 201, "POST", hostsPath, req).Decode(t, &h)
	if h.Mode != "bare" || h.DockerSocket != "" {
		t.Fatalf("registered %+v", h)
	}
	var got client.Host
	env.Must(t, 200, "GET", hostsPath+"/metal", nil).Decode(t, &got)
	if got.Mode != "bare" {
		t.Fatalf("get = %+v", got)
	}

	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p",
		Runtime: &client.RuntimeConfig{Provider: "metal"}}).Decode(t, &p)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rt+"/start", client.StartRuntimeRequest{})
	var res client.ExecResult
	env.Must(t, 200, "POST", rt+"/exec", client.ExecRequest{Argv: []string{"sh", "-c",
		"echo $$; tr '\\0' ' ' < /proc/1/cmdline; echo; echo kept > /workspace/f && cat /workspace/f"}}).Decode(t, &res)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if res.Exit == nil || res.Exit.Code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "paddock-shim") || lines[2] != "kept" {
		t.Fatalf("exec on the bare machine: exit %+v, %q %q", res.Exit, res.Stdout, res.Stderr)
	}
	if n := m.Engine.Containers(t, p.RuntimeID); n != 0 {
		t.Fatalf("a bare machine's runtime made %d containers on its engine", n)
	}
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p", nil)
	env.Must(t, 204, "DELETE", hostsPath+"/metal", nil)

	// A login that is not root cannot run bare sandboxes: refused, and
	// nothing is stored.
	m.RunAs(t, 65534)
	if r := env.Do(t, "POST", hostsPath, req); r.Status != 422 || r.Code() != "ssh_bare_needs_root" {
		t.Fatalf("a bare machine logged in as nobody: %d %s", r.Status, r.Body)
	}
	env.Must(t, 404, "GET", hostsPath+"/metal", nil)
}
