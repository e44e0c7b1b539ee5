package api_test

import (
	"github.com/paddockhq/paddock/internal/ledger"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestRuntimeConfigRefusedAtCreate: a config the installation will not or
// cannot run is refused when the project is created, with a 4xx and a
// stable code, and nothing is created.
func TestRuntimeConfigRefusedAtCreate(t *testing.T) {
	prov := fake.New(fake.Config{Capacity: provider.Resources{CPUMillis: 2000, MemoryMB: 4096}})
	env := servertest.New(t, servertest.Options{Provider: prov, Image: "paddock/debian:bookworm"})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})

	for _, tc := range []struct {
		name   string
		cfg    client.RuntimeConfig
		status int
		code   string
	}{
		{"an image on a loopback registry", client.RuntimeConfig{Image: "127.0.0.1:5000/x"}, 400, "image_not_allowed"},
		{"an image on the metadata address", client.RuntimeConfig{Image: "169.254.169.254/x"}, 400, "image_not_allowed"},
		{"an image outside the allow-list", client.RuntimeConfig{Image: "ubuntu:24.04"}, 400, "image_not_allowed"},
		{"a snapshot named as an image", client.RuntimeConfig{Image: fake.ArchiveRepository + ":1"}, 400, "image_not_allowed"},
		{"more cores than the host", client.RuntimeConfig{CPUMillis: 4000}, 422, "exceeds_host_capacity"},
		{"more memory than the host", client.RuntimeConfig{MemoryMB: 8192}, 422, "exceeds_host_capacity"},
		{"a network the provider does not offer", client.RuntimeConfig{Network: &client.NetworkPolicy{Mode: "proxy"}}, 422, "network_policy_not_supported"},
		{"a disk quota too small", client.RuntimeConfig{DiskMB: 1}, 400, "invalid_resources"},
		{"a disk quota over the maximum", client.RuntimeConfig{DiskMB: 1 << 30}, 400, "invalid_resources"},
		{"an allow rule on the host's loopback", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"127.0.0.0/8"}}}, 400, "internal_address_not_allowed"},
		{"an allow rule on loopback in decimal", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"pypi.org", "2130706433:8080"}}}, 400, "internal_address_not_allowed"},
		{"an allow rule on the metadata address", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"169.254.169.254"}}}, 400, "internal_address_not_allowed"},
		{"an allow rule naming localhost", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"localhost:8080"}}}, 400, "internal_address_not_allowed"},
		{"an allow rule on a private range", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"10.0.0.0/8"}}}, 400, "internal_address_not_allowed"},
		{"an allow rule on loopback with a trailing dot", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"127.0.0.1."}}}, 400, "internal_address_not_allowed"},
		{"an allow rule on the metadata address with a trailing dot", client.RuntimeConfig{Network: &client.NetworkPolicy{Allow: []string{"169.254.169.254."}}}, 400, "internal_address_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p", Runtime: &tc.cfg})
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("create = %d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
			if r := env.Do(t, "GET", "/api/v1/org/acme/ws/dev/projects/p", nil); r.Status != 404 {
				t.Fatalf("the refused project exists: %d %s", r.Status, r.Body)
			}
		})
	}

	// What is allowed: the default image, the allow-list, a quota.
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "ok", Runtime: &client.RuntimeConfig{Image: "paddock/test-busybox:latest", CPUMillis: 2000, MemoryMB: 4096, DiskMB: 256},
	}).Decode(t, &p)
	var rt client.Runtime
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil).Decode(t, &rt)
	if rt.Config.DiskMB != 256 {
		t.Fatalf("disk_mb = %d, want 256", rt.Config.DiskMB)
	}
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	if c := prov.Live(); len(c) != 1 || c[0].Spec.Resources.DiskMB != 256 {
		t.Fatalf("the sandbox's spec = %+v, want a 256 MiB disk", c)
	}
	// The default quota applies to a runtime that names none.
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "dflt"}).Decode(t, &p)
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil).Decode(t, &rt)
	if rt.Config.DiskMB != 10240 {
		t.Fatalf("default disk_mb = %d, want 10240", rt.Config.DiskMB)
	}
}

// TestPauseVanishedCompute: pausing a runtime whose compute has vanished
// answers 409 with the runtime's code (its cause, the provider's not
// found, does not decide the status), and leaves the runtime in error.
func TestPauseVanishedCompute(t *testing.T) {
	env, _, rtPath := setup(t)
	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	var sb client.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &sb)
	if !env.Fake.Vanish(sb.ProviderSandboxID) {
		t.Fatal("the fake had no such compute")
	}
	r := env.Do(t, "POST", rtPath+"/pause", nil)
	if r.Status != 409 {
		t.Fatalf("pause of vanished compute = %d %s, want 409", r.Status, r.Body)
	}
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != client.RuntimeError {
		t.Fatalf("runtime after its compute vanished = %+v", rt)
	}
}

// TestBearerSchemeCaseInsensitive: the scheme's name matches in any case;
// anything else is 401.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	for _, tc := range []struct {
		header string
		status int
	}{
		{"Bearer " + env.Key, 200},
		{"bearer " + env.Key, 200},
		{"BEARER " + env.Key, 200},
		{"bEaReR   " + env.Key, 200},
		{"Basic " + env.Key, 401},
		{"Bearer", 401},
		{env.Key, 401},
		{"Bearer pdk_wrong", 401},
	} {
		req, err := http.NewRequest("GET", env.URL+"/api/v1/orgs", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", tc.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: %d, want %d", strings.Replace(tc.header, env.Key, "KEY", 1), resp.StatusCode, tc.status)
		}
	}
}

// TestStrictJSON: a key twice in one object, at any depth, and null for a
// required field are 400 with their own codes, and nothing is created.
func TestStrictJSON(t *testing.T) {
	env, _, rtPath := setup(t)
	for _, tc := range []struct {
		name, method, path, body, code string
	}{
		{"duplicate key", "POST", "/api/v1/orgs", `{"name":"a","name":"b"}`, "duplicate_json_key"},
		{"duplicate key, nested", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"n","runtime":{"cpu_millis":500,"cpu_millis":900}}`, "duplicate_json_key"},
		{"duplicate key in a map", "POST", rtPath + "/exec", `{"argv":["true"],"env":{"A":"1","A":"2"}}`, "duplicate_json_key"},
		{"null name", "POST", "/api/v1/orgs", `{"name":null}`, "null_field"},
		{"null workspace name", "POST", "/api/v1/org/acme/ws", `{"name":null}`, "null_field"},
		{"null project name", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":null}`, "null_field"},
		{"null argv", "POST", rtPath + "/exec", `{"argv":null}`, "null_field"},
		{"null amount", "POST", "/api/v1/org/acme/credits/grants", `{"amount":null,"idempotency_key":"k"}`, "null_field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, tc.method, tc.path, tc.body)
			if r.Status != 400 || r.Code() != tc.code {
				t.Fatalf("%s %s %s = %d %s, want 400 %s", tc.method, tc.path, tc.body, r.Status, r.Body, tc.code)
			}
		})
	}
	var orgs client.List[client.Org]
	env.Must(t, 200, "GET", "/api/v1/orgs", nil).Decode(t, &orgs)
	if len(orgs.Items) != 1 {
		t.Fatalf("orgs after refused creates: %+v", orgs.Items)
	}
	// null for an optional field too: the document allows null nowhere.
	if r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"opt","description":null}`); r.Status != 400 || r.Code() != "null_field" {
		t.Fatalf("null for an optional field = %d %s", r.Status, r.Body)
	}
}

// TestProjectNames: runtimes, sandboxes and usage say which project they
// belong to by name, as people know it.
func TestProjectNames(t *testing.T) {
	pricing := ledger.Pricing{Default: ledger.Rate{CPUMicros: 280, MemoryMicros: 70}, FirstSlice: time.Minute}
	env := servertest.New(t, servertest.Options{Pricing: &pricing, NewOrgMicros: 100_000_000})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "agent-1"}).Decode(t, &p)
	var rt client.Runtime
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil).Decode(t, &rt)
	if rt.ProjectName != "agent-1" {
		t.Fatalf("runtime project_name = %q", rt.ProjectName)
	}
	var rts client.List[client.Runtime]
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes", nil).Decode(t, &rts)
	if len(rts.Items) != 1 || rts.Items[0].ProjectName != "agent-1" {
		t.Fatalf("runtimes = %+v", rts.Items)
	}
	var sbs client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes", nil).Decode(t, &sbs)
	if len(sbs.Items) != 1 || sbs.Items[0].ProjectName != "agent-1" {
		t.Fatalf("sandboxes = %+v", sbs.Items)
	}
	var u client.Usage
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?group_by=runtime", nil).Decode(t, &u)
	if len(u.Items) != 1 || u.Items[0].Name != "agent-1" || u.Items[0].Key != p.RuntimeID {
		t.Fatalf("usage by runtime = %+v", u.Items)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?group_by=org", nil).Decode(t, &u)
	if len(u.Items) != 1 || u.Items[0].Name != "acme" {
		t.Fatalf("usage by org = %+v", u.Items)
	}
}

// TestRootFS: a runtime's root is read-only unless it asks for a writable
// one, which reaches the provider's spec; a bad mode is 400, and a
// provider that cannot give one refuses it when the project is created.
func TestRootFS(t *testing.T) {
	env, _, rtPath := setup(t)
	var rt client.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Config.RootFS != "readonly" {
		t.Fatalf("default rootfs %q", rt.Config.RootFS)
	}
	if r := env.Must(t, 400, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "bad",
		Runtime: &client.RuntimeConfig{RootFS: "rw"}}); r.Code() != "invalid_rootfs" {
		t.Fatalf("a bad rootfs: %s", r.Code())
	}
	var up client.RuntimeUpdate
	w := "writable"
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{RootFS: &w}).Decode(t, &up)
	if strings.Join(up.NextStart, ",") != "rootfs" || up.Runtime.Config.RootFS != "writable" {
		t.Fatalf("patch: %+v", up)
	}
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	if c := env.Fake.Live(); len(c) != 1 || !c[0].Spec.WritableRoot {
		t.Fatalf("the sandbox's spec: %+v", c)
	}

	prov := fake.New(fake.Config{NoWritableRoot: true})
	env2 := servertest.New(t, servertest.Options{Provider: prov})
	env2.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env2.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	if r := env2.Must(t, 422, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p",
		Runtime: &client.RuntimeConfig{RootFS: "writable"}}); r.Code() != "rootfs_not_supported" {
		t.Fatalf("a writable root the provider cannot give: %s", r.Code())
	}
}

// TestConfigureRuntime: PATCH changes only what it names and says when
// each change applies: rules and timeouts at once, the rest at the next
// start while the runtime has a sandbox; each rule list replaces the
// runtime's own, an empty one clears it; bad input is 400 and changes
// nothing.
func TestConfigureRuntime(t *testing.T) {
	prov := fake.New(fake.Config{Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}})
	env := servertest.New(t, servertest.Options{Provider: prov})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p", Runtime: &client.RuntimeConfig{
		Network: &client.NetworkPolicy{Mode: "proxy", Allow: []string{"pypi.org"}, Deny: []string{"evil.example"}},
	}}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	patch := func(want int, body client.RuntimePatch) client.RuntimeUpdate {
		t.Helper()
		var up client.RuntimeUpdate
		r := env.Must(t, want, "PATCH", rtPath, body)
		if want == 200 {
			r.Decode(t, &up)
		}
		return up
	}
	names := func(s []string) string { return strings.Join(s, ",") }

	// No sandbox: everything applies now.
	mem := int64(512)
	up := patch(200, client.RuntimePatch{MemoryMB: &mem})
	if names(up.Live) != "memory_mb" || len(up.NextStart) != 0 || up.Runtime.Config.MemoryMB != 512 {
		t.Fatalf("memory, idle: %+v", up)
	}
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	// Errors name the runtime by its project, as every listing does, not
	// by the id the path holds.
	if r := env.Must(t, 409, "POST", rtPath+"/start", nil); !strings.Contains(string(r.Body), `"runtime p is already running"`) {
		t.Fatalf("a second start: %s", r.Body)
	}

	// Only the allow list: the deny list and the mode stay.
	up = patch(200, client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"*.pypi.org", "files.pythonhosted.org"}}})
	n := up.Runtime.Config.Network
	if names(up.Live) != "network.allow" || n.Mode != "proxy" || names(n.Allow) != "*.pypi.org,files.pythonhosted.org" || names(n.Deny) != "evil.example" {
		t.Fatalf("allow only: %+v %+v", up.Live, n)
	}
	// An empty list clears.
	up = patch(200, client.RuntimePatch{Network: &client.NetworkPatch{Deny: &[]string{}}})
	if names(up.Live) != "network.deny" || len(up.Runtime.Config.Network.Deny) != 0 || len(up.Runtime.Config.Network.Allow) != 2 {
		t.Fatalf("deny cleared: %+v", up)
	}
	// With a sandbox: the mode and resources wait for the next start;
	// timeouts do not.
	idle := int64(600)
	up = patch(200, client.RuntimePatch{Network: &client.NetworkPatch{Mode: "none"}, MemoryMB: &mem, IdleTimeoutSeconds: &idle})
	if names(up.Live) != "idle_timeout_seconds" || names(up.NextStart) != "network.mode" {
		t.Fatalf("running: live %v, next start %v", up.Live, up.NextStart)
	}
	// Nothing changed: nothing to say.
	up = patch(200, client.RuntimePatch{IdleTimeoutSeconds: &idle})
	if len(up.Live)+len(up.NextStart) != 0 {
		t.Fatalf("no change: %+v", up)
	}

	before := env.Must(t, 200, "GET", rtPath, nil)
	for _, tc := range []struct {
		body client.RuntimePatch
		code string
	}{
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"not a rule!"}}}, "invalid_network_rule"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Mode: "wide"}}, "invalid_network"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"127.0.0.0/8"}}}, "internal_address_not_allowed"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"[::ffff:127.0.0.1]:80"}}}, "internal_address_not_allowed"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"0x7f.1:8080"}}}, "internal_address_not_allowed"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"172.17.0.1:8080"}}}, "internal_address_not_allowed"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"2130706433."}}}, "internal_address_not_allowed"},
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"0x7f000001.:8080"}}}, "internal_address_not_allowed"},
		// The mode is none now: a rule given would apply to nothing.
		{client.RuntimePatch{Network: &client.NetworkPatch{Allow: &[]string{"pypi.org"}}}, "network_rules_need_proxy"},
		// Open mode has no rules either: given with it, they are refused.
		{client.RuntimePatch{Network: &client.NetworkPatch{Mode: "open", Deny: &[]string{"evil.example"}}}, "network_rules_need_proxy"},
		{client.RuntimePatch{MemoryMB: new(int64)}, "invalid_resources"},
	} {
		if r := env.Must(t, 400, "PATCH", rtPath, tc.body); r.Code() != tc.code {
			t.Errorf("%+v: %s, want %s", tc.body, r.Code(), tc.code)
		}
	}
	if r := env.Must(t, 200, "GET", rtPath, nil); string(r.Body) != string(before.Body) {
		t.Fatalf("a refused patch changed the runtime:\n%s\n%s", before.Body, r.Body)
	}
}
