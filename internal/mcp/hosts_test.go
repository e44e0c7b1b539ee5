package mcp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestHostTools: a member's key adds a real machine, lists it and removes
// it through the tools; a viewer's key may list but is refused adding
// and removing (role_too_low), and its refused add stores nothing; a key
// of another org neither sees nor removes acme's machine.
func TestHostTools(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	e := &env{Env: servertest.New(t, servertest.Options{ShimPath: testenv.Binary(t, "paddock-shim")})}
	for _, org := range []string{"acme", "other"} {
		e.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: org})
		e.Must(t, 201, "POST", "/api/v1/org/"+org+"/ws", client.CreateWorkspaceRequest{Name: "dev"})
	}
	e.viewer = e.userKey(t, "acme", "viewer@example.com", "viewer")
	e.member = e.userKey(t, "acme", "member@example.com", "member")
	e.foreign = e.userKey(t, "other", "foreign@example.com", "admin")
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"name": "box", "address": m.Addr, "user": "root", "private_key": string(key), "host_key": m.HostKey,
		"docker_socket": m.Socket, "run_dir": filepath.Join(m.Dir, "run"), "disk_dir": filepath.Join(m.Dir, "disks")}

	viewer := e.connect(t, e.viewer.Key)
	wantToolError(t, viewer, "add_host", args, "role_too_low")
	var list mcp.HostList
	call(t, viewer, "list_hosts", nil, &list)
	if len(list.Hosts) != 0 {
		t.Fatalf("a refused add stored %+v", list.Hosts)
	}

	member := e.connect(t, e.member.Key)
	var h mcp.Host
	call(t, member, "add_host", args, &h)
	if h.Name != "box" || h.Address != m.Addr || h.State != "ready" {
		t.Fatalf("add_host = %+v", h)
	}
	call(t, viewer, "list_hosts", nil, &list)
	if len(list.Hosts) != 1 || list.Hosts[0].Name != "box" {
		t.Fatalf("list_hosts = %+v", list)
	}
	wantToolError(t, viewer, "remove_host", map[string]any{"name": "box"}, "role_too_low")
	foreign := e.connect(t, e.foreign.Key)
	wantToolError(t, foreign, "remove_host", map[string]any{"name": "box"}, "org_not_found")
	wantToolError(t, foreign, "remove_host", map[string]any{"org": "other", "name": "box"}, "host_not_found")

	var removed mcp.Removed
	call(t, member, "remove_host", map[string]any{"name": "box"}, &removed)
	if !removed.Removed {
		t.Fatalf("remove_host = %+v", removed)
	}
	call(t, member, "list_hosts", nil, &list)
	if len(list.Hosts) != 0 {
		t.Fatalf("after remove_host: %+v", list)
	}
}
