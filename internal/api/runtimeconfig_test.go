package api_test

import (
	"testing"

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
		{"a network the provider does not offer", client.RuntimeConfig{Network: "proxy"}, 422, "network_policy_not_supported"},
		{"a disk quota too small", client.RuntimeConfig{DiskMB: 1}, 400, "invalid_resources"},
		{"a disk quota over the maximum", client.RuntimeConfig{DiskMB: 1 << 30}, 400, "invalid_resources"},
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
