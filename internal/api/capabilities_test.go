package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// capFile is one entry of a test bundle's archive; a zero typ is a regular
// file.
type capFile struct {
	name, body string
	typ        byte
	link       string
}

// capTar is a bundle's archive, gzip-compressed when gz is set.
func capTar(t *testing.T, gz bool, files ...capFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw *gzip.Writer
	tw := tar.NewWriter(&buf)
	if gz {
		zw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(zw)
	}
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Typeflag: f.typ, Mode: 0o644, Size: int64(len(f.body)), Linkname: f.link}
		if f.typ == 0 {
			hdr.Typeflag = tar.TypeReg
		} else {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(f.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// capTarGz is a bundle as a tar.gz.
func capTarGz(t *testing.T, files ...capFile) []byte {
	t.Helper()
	return capTar(t, true, files...)
}

// capManifest is a capability.yaml: the required head, then rest.
func capManifest(name, version, rest string) string {
	return "schema_version: 1\nname: " + name + "\nversion: " + version + "\ndescription: A test capability.\n" + rest
}

// kitBundle is the kit capability at version, shipping one tool (whose
// text is tool) and a flag.
func kitBundle(t *testing.T, version, tool string) []byte {
	t.Helper()
	return capTarGz(t,
		capFile{name: "capability.yaml", body: capManifest("kit", version,
			"tools:\n  - {name: kit-tool, path: tools/kit-tool, description: Says hello.}\n"+
				"flags:\n  verbose: {description: Be loud., default: false}\n")},
		capFile{name: "tools/kit-tool", body: "#!/bin/sh\necho " + tool + "\n"},
	)
}

const gzipType = "application/gzip"

// pushCap pushes a bundle to org's inventory and wants status.
func pushCap(t *testing.T, env *servertest.Env, org string, want int, bundle []byte) client.CapabilityVersion {
	t.Helper()
	var v client.CapabilityVersion
	r := env.MustRaw(t, want, "POST", "/api/v1/org/"+org+"/capabilities", gzipType, bundle)
	if want < 300 {
		r.Decode(t, &v)
	}
	return v
}

// inventoryOf lists org's inventory as "name@version#id" lines.
func inventoryOf(t *testing.T, env *servertest.Env, org, query string) []string {
	t.Helper()
	var list client.List[client.CapabilityVersion]
	env.Must(t, 200, "GET", "/api/v1/org/"+org+"/capabilities"+query, nil).Decode(t, &list)
	out := []string{}
	for _, v := range list.Items {
		out = append(out, v.Name+"@"+v.Version+"#"+v.ID)
	}
	return out
}

// bindingsOf lists a runtime's bindings.
func bindingsOf(t *testing.T, env *servertest.Env, rtPath string) []client.CapabilityBinding {
	t.Helper()
	var list client.List[client.CapabilityBinding]
	env.Must(t, 200, "GET", rtPath+"/capabilities", nil).Decode(t, &list)
	return list.Items
}

// bindingNames are a runtime's bindings as "name@version" (with
// ",disabled" when not enabled), in install order.
func bindingNames(t *testing.T, env *servertest.Env, rtPath string) string {
	t.Helper()
	var out []string
	for _, b := range bindingsOf(t, env, rtPath) {
		s := b.Name + "@" + b.Version
		if !b.Enabled {
			s += ",disabled"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func resolvedOf(t *testing.T, env *servertest.Env, rtPath string) client.ResolvedCapabilities {
	t.Helper()
	var res client.ResolvedCapabilities
	env.Must(t, 200, "GET", rtPath+"/capabilities/resolved", nil).Decode(t, &res)
	return res
}

func itemNames(items []client.ResolvedItem) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name+"<"+it.Capability)
	}
	return strings.Join(out, ",")
}

// newRuntime creates a project in acme/dev and returns its runtime's path.
func newRuntime(t *testing.T, env *servertest.Env, name string) string {
	t.Helper()
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: name}).Decode(t, &p)
	return "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
}

// TestCapabilityCatalog: the built-in catalog lists repo-tools and memory
// with what each ships, its digest and its flags.
func TestCapabilityCatalog(t *testing.T) {
	env, _, _ := setup(t)
	var list client.List[client.CapabilityVersion]
	env.Must(t, 200, "GET", "/api/v1/catalog", nil).Decode(t, &list)
	byName := map[string]client.CapabilityVersion{}
	for _, v := range list.Items {
		if v.Source != client.SourceCatalog || v.ID != "" || v.CreatedAt != nil || v.Description == "" || v.SizeBytes <= 0 ||
			!strings.HasPrefix(v.Digest, "sha256:") || len(v.Digest) != len("sha256:")+64 {
			t.Errorf("catalog entry %+v", v)
		}
		byName[v.Name] = v
	}
	join := func(s []string) string { return strings.Join(s, ",") }
	rt, ok := byName["repo-tools"]
	if !ok || rt.Version != "1.0.0" {
		t.Fatalf("repo-tools in the catalog: %+v", list.Items)
	}
	if c := rt.Contents; join(c.Agents) != "code-reviewer" || join(c.Skills) != "repo-map" || join(c.Tools) != "repo-map" ||
		join(c.Checks) != "git" || len(c.MCPServers)+len(c.Workers)+len(c.Setup)+len(c.Flags) != 0 {
		t.Errorf("repo-tools contents: %+v", c)
	}
	mem, ok := byName["memory"]
	if !ok || mem.Version != "1.0.0" {
		t.Fatalf("memory in the catalog: %+v", list.Items)
	}
	if c := mem.Contents; join(c.Skills) != "memory" || join(c.MCPServers) != "memory" || join(c.Checks) != "python3" ||
		len(c.Agents)+len(c.Tools)+len(c.Workers)+len(c.Setup) != 0 ||
		len(c.Flags) != 1 || c.Flags[0].Name != "memory" || !c.Flags[0].Default || c.Flags[0].Description == "" {
		t.Errorf("memory contents: %+v", c)
	}
	if rt.Digest == mem.Digest {
		t.Errorf("two bundles share a digest: %s", rt.Digest)
	}
}

// TestCapabilityInventory: pushing is idempotent for the same bundle and
// refuses other contents under a pushed version; bad bundles and bodies
// are refused whole with stable codes and leave the inventory as it was;
// a pinned version cannot be deleted; another org sees none of it.
func TestCapabilityInventory(t *testing.T) {
	env, _, rtPath := setup(t)
	const inv = "/api/v1/org/acme/capabilities"

	v1 := pushCap(t, env, "acme", 201, kitBundle(t, "1.0.0", "one"))
	if v1.ID == "" || v1.Source != client.SourceInventory || v1.Name != "kit" || v1.Version != "1.0.0" || v1.CreatedAt == nil ||
		!strings.HasPrefix(v1.Digest, "sha256:") || v1.SizeBytes <= 0 ||
		strings.Join(v1.Contents.Tools, ",") != "kit-tool" || len(v1.Contents.Flags) != 1 || v1.Contents.Flags[0].Name != "verbose" {
		t.Fatalf("pushed: %+v", v1)
	}
	// The very same bundle again, gzipped or not: 200 with the version
	// already there.
	if again := pushCap(t, env, "acme", 200, kitBundle(t, "1.0.0", "one")); again.ID != v1.ID || again.Digest != v1.Digest {
		t.Fatalf("pushed again: %+v, want %+v", again, v1)
	}
	var plain client.CapabilityVersion
	env.MustRaw(t, 200, "POST", inv, "application/x-tar", capTar(t, false,
		capFile{name: "capability.yaml", body: capManifest("kit", "1.0.0",
			"tools:\n  - {name: kit-tool, path: tools/kit-tool, description: Says hello.}\n"+
				"flags:\n  verbose: {description: Be loud., default: false}\n")},
		capFile{name: "tools/kit-tool", body: "#!/bin/sh\necho one\n"},
	)).Decode(t, &plain)
	if plain.ID != v1.ID {
		t.Fatalf("the same bundle as a plain tar: %+v, want id %s", plain, v1.ID)
	}
	pushCap(t, env, "acme", 201, kitBundle(t, "1.1.0", "two"))
	before := inventoryOf(t, env, "acme", "")
	if len(before) != 2 {
		t.Fatalf("inventory: %v", before)
	}

	// Refusals: the exact status and code, and the inventory unchanged.
	symlinkBundle := capTarGz(t,
		capFile{name: "capability.yaml", body: capManifest("linky", "1.0.0", "")},
		capFile{name: "tools/link", typ: tar.TypeSymlink, link: "/etc/passwd"},
	)
	traversal := capTarGz(t,
		capFile{name: "capability.yaml", body: capManifest("escape", "1.0.0", "")},
		capFile{name: "../evil", body: "x"},
	)
	huge := make([]byte, 16<<20+1)
	for _, tc := range []struct {
		name        string
		contentType string
		body        []byte
		status      int
		code        string
		message     []string // each must be in the error's message
	}{
		{"other contents under a pushed version", gzipType, kitBundle(t, "1.0.0", "changed"), 409, "capability_version_exists", []string{"kit 1.0.0"}},
		{"several problems", gzipType, capTarGz(t,
			capFile{name: "capability.yaml", body: "schema_version: 1\nname: broken\nversion: one\n" +
				"tools:\n  - {name: t, path: tools/missing, description: d}\nagents:\n  - agents/bad.md\n"},
			capFile{name: "agents/bad.md", body: "no frontmatter\n"},
		), 400, "invalid_capability", []string{
			"capability.yaml: version:", "capability.yaml: description: required",
			"capability.yaml: tools[0].path:", "tools/missing", "agents/bad.md: frontmatter",
		}},
		{"a path with ../", gzipType, traversal, 400, "invalid_capability", []string{"../evil"}},
		{"a symlink", gzipType, symlinkBundle, 400, "invalid_capability", []string{"tools/link: symlinks are not allowed"}},
		{"not an archive", gzipType, []byte("\x1f\x8bnot really gzip"), 400, "invalid_capability", nil},
		{"no manifest", gzipType, capTarGz(t, capFile{name: "README.md", body: "hi"}), 400, "invalid_capability", []string{"capability.yaml: not found"}},
		{"a zip", "application/zip", kitBundle(t, "2.0.0", "zip"), 415, "unsupported_media_type", nil},
		{"JSON", "application/json", []byte(`{"name":"kit"}`), 415, "unsupported_media_type", nil},
		{"over 16 MiB", gzipType, huge, 413, "body_too_large", nil},
		{"over 16 MiB once uncompressed", gzipType, capTarGz(t,
			capFile{name: "capability.yaml", body: capManifest("big", "1.0.0", "")},
			capFile{name: "zeros", body: strings.Repeat("\x00", 16<<20)},
		), 400, "invalid_capability", []string{"more than 16777216 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.MustRaw(t, tc.status, "POST", inv, tc.contentType, tc.body)
			if r.Code() != tc.code {
				t.Fatalf("code %q, want %q: %s", r.Code(), tc.code, r.Body)
			}
			var e client.Error
			r.Decode(t, &e)
			for _, want := range tc.message {
				if !strings.Contains(e.Message, want) {
					t.Errorf("message %q does not name %q", e.Message, want)
				}
			}
			if got := inventoryOf(t, env, "acme", ""); !slices.Equal(got, before) {
				t.Fatalf("inventory after a refused push: %v, want %v", got, before)
			}
		})
	}

	// Listing: by name, then the whole inventory.
	pushCap(t, env, "acme", 201, capTarGz(t, capFile{name: "capability.yaml", body: capManifest("other", "0.1.0", "")}))
	if got := inventoryOf(t, env, "acme", "?name=kit"); !slices.Equal(got, before) {
		t.Fatalf("?name=kit: %v, want %v", got, before)
	}
	if got := inventoryOf(t, env, "acme", "?name=nothing"); len(got) != 0 {
		t.Fatalf("?name=nothing: %v", got)
	}
	if got := inventoryOf(t, env, "acme", ""); len(got) != 3 || !strings.HasPrefix(got[2], "other@0.1.0#") {
		t.Fatalf("inventory: %v", got)
	}
	wantError(t, env.Do(t, "GET", inv+"?name=Not_A_Name", nil), 400, "invalid_name")

	// Another org sees none of it and cannot delete it; nor install it.
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	if got := inventoryOf(t, env, "other", ""); len(got) != 0 {
		t.Fatalf("another org's inventory: %v", got)
	}
	wantError(t, env.Do(t, "DELETE", "/api/v1/org/other/capabilities/kit/1.0.0", nil), 404, "capability_not_found")
	env.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var op client.Project
	env.Must(t, 201, "POST", "/api/v1/org/other/ws/dev/projects", client.CreateProjectRequest{Name: "p"}).Decode(t, &op)
	otherRt := "/api/v1/org/other/ws/dev/runtimes/" + op.RuntimeID
	wantError(t, env.Do(t, "POST", otherRt+"/capabilities", client.InstallCapabilityRequest{Name: "kit"}), 404, "capability_not_found")
	if n := len(bindingsOf(t, env, otherRt)); n != 0 {
		t.Fatalf("bindings after a refused install: %d", n)
	}
	wantError(t, env.Do(t, "GET", "/api/v1/org/nobody/capabilities", nil), 404, "org_not_found")
	// A key of the other org does not see acme at all.
	var otherOrg client.Org
	env.Must(t, 200, "GET", "/api/v1/org/other", nil).Decode(t, &otherOrg)
	otherKey, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "other admin", Role: string(auth.RoleAdmin), OrgID: otherOrg.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, env.DoKey(t, otherKey, "GET", inv, nil), 404, "org_not_found")
	wantError(t, env.DoKey(t, otherKey, "DELETE", inv+"/kit/1.0.0", nil), 404, "org_not_found")
	if r := env.DoKey(t, otherKey, "GET", "/api/v1/org/other/capabilities", nil); r.Status != 200 || strings.Contains(string(r.Body), "kit") {
		t.Fatalf("the other org's own inventory: %d %s", r.Status, r.Body)
	}
	if got := inventoryOf(t, env, "acme", "?name=kit"); !slices.Equal(got, before) {
		t.Fatalf("inventory after another org's delete: %v", got)
	}

	// A pinned version is in use until its binding goes.
	var b client.CapabilityBinding
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "kit", Version: "1.0.0"}).Decode(t, &b)
	wantError(t, env.Do(t, "DELETE", inv+"/kit/1.0.0", nil), 409, "capability_in_use")
	if got := inventoryOf(t, env, "acme", "?name=kit"); !slices.Equal(got, before) {
		t.Fatalf("inventory after a refused delete: %v", got)
	}
	// The unpinned version goes.
	env.Must(t, 204, "DELETE", inv+"/kit/1.1.0", nil)
	wantError(t, env.Do(t, "DELETE", inv+"/kit/1.1.0", nil), 404, "capability_not_found")
	wantError(t, env.Do(t, "DELETE", inv+"/nothing/1.0.0", nil), 404, "capability_not_found")
	env.Must(t, 204, "DELETE", rtPath+"/capabilities/"+b.ID, nil)
	env.Must(t, 204, "DELETE", inv+"/kit/1.0.0", nil)
	if got := inventoryOf(t, env, "acme", "?name=kit"); len(got) != 0 {
		t.Fatalf("kit after deleting both versions: %v", got)
	}
	// Its name and version are free again, for other contents.
	pushCap(t, env, "acme", 201, kitBundle(t, "1.0.0", "changed"))
}

// TestCapabilityBindings: installing from the catalog or the inventory,
// by source or by default (the inventory first), pinned or newest;
// refusals that leave no binding; PATCH and DELETE; the resolved set; a
// binding's status without a sandbox; bindings survive reset.
func TestCapabilityBindings(t *testing.T) {
	env, _, rtPath := setup(t)
	pushCap(t, env, "acme", 201, kitBundle(t, "1.0.0", "one"))
	pushCap(t, env, "acme", 201, kitBundle(t, "1.2.0", "three"))
	pushCap(t, env, "acme", 201, kitBundle(t, "1.1.0", "two"))
	// A memory of the org's own, older than the catalog's.
	pushCap(t, env, "acme", 201, capTarGz(t, capFile{name: "capability.yaml", body: capManifest("memory", "0.9.0", "")}))

	install := func(rtPath string, req client.InstallCapabilityRequest) client.CapabilityBinding {
		t.Helper()
		var b client.CapabilityBinding
		env.Must(t, 201, "POST", rtPath+"/capabilities", req).Decode(t, &b)
		return b
	}
	f := false
	t.Run("sources and versions", func(t *testing.T) {
		rt := newRuntime(t, env, "sources")
		for _, tc := range []struct {
			req             client.InstallCapabilityRequest
			source, version string
		}{
			{client.InstallCapabilityRequest{Name: "repo-tools"}, client.SourceCatalog, "1.0.0"},                // only in the catalog
			{client.InstallCapabilityRequest{Name: "kit"}, client.SourceInventory, "1.2.0"},                     // newest, not latest pushed
			{client.InstallCapabilityRequest{Name: "memory"}, client.SourceInventory, "0.9.0"},                  // the inventory first
			{client.InstallCapabilityRequest{Name: "memory", Source: "catalog"}, client.SourceCatalog, "1.0.0"}, // asked for
			{client.InstallCapabilityRequest{Name: "kit", Version: "1.1.0", Source: "inventory"}, client.SourceInventory, "1.1.0"},
			{client.InstallCapabilityRequest{Name: "repo-tools", Version: "1.0.0", Source: "catalog", Enabled: &f}, client.SourceCatalog, "1.0.0"},
		} {
			b := install(rt, tc.req)
			if b.Source != tc.source || b.Version != tc.version || b.Name != tc.req.Name || b.RuntimeID == "" ||
				b.Enabled != (tc.req.Enabled == nil) || b.Status == nil || b.Status.State != client.BindingPending {
				t.Errorf("install %+v: %+v (status %+v), want %s %s", tc.req, b, b.Status, tc.source, tc.version)
			}
			env.Must(t, 204, "DELETE", rt+"/capabilities/"+b.ID, nil)
		}
	})

	t.Run("refused installs leave nothing", func(t *testing.T) {
		rt := newRuntime(t, env, "refusals")
		install(rt, client.InstallCapabilityRequest{Name: "repo-tools"})
		for _, tc := range []struct {
			name   string
			req    any
			status int
			code   string
		}{
			{"unknown name", client.InstallCapabilityRequest{Name: "nothing"}, 404, "capability_not_found"},
			{"unknown name in the inventory", client.InstallCapabilityRequest{Name: "repo-tools", Source: "inventory"}, 404, "capability_not_found"},
			{"unknown inventory version", client.InstallCapabilityRequest{Name: "kit", Version: "9.9.9"}, 404, "capability_not_found"},
			{"unknown catalog version", client.InstallCapabilityRequest{Name: "memory", Version: "9.9.9", Source: "catalog"}, 404, "capability_not_found"},
			{"already installed", client.InstallCapabilityRequest{Name: "repo-tools"}, 409, "capability_already_installed"},
			{"already installed, another version", client.InstallCapabilityRequest{Name: "repo-tools", Version: "1.0.0", Enabled: &f}, 409, "capability_already_installed"},
			{"a flag the bundle lacks", client.InstallCapabilityRequest{Name: "kit", Config: &client.BindingConfig{Flags: map[string]bool{"loud": true}}}, 400, "unknown_flag"},
			{"a flag of the catalog's memory", client.InstallCapabilityRequest{Name: "memory", Config: &client.BindingConfig{Flags: map[string]bool{"memory": true}}}, 400, "unknown_flag"},
			{"an unknown source", client.InstallCapabilityRequest{Name: "kit", Source: "elsewhere"}, 400, "invalid_source"},
			{"a malformed name", client.InstallCapabilityRequest{Name: "Not A Name"}, 400, "invalid_capability"},
			{"an unknown field", map[string]any{"name": "kit", "pin": "1.0.0"}, 400, "unknown_field"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, env.Do(t, "POST", rt+"/capabilities", tc.req), tc.status, tc.code)
				if got := bindingNames(t, env, rt); got != "repo-tools@1.0.0" {
					t.Fatalf("bindings after a refused install: %s", got)
				}
			})
		}
	})

	// One runtime with three bindings, changed by PATCH.
	tools := install(rtPath, client.InstallCapabilityRequest{Name: "repo-tools"})
	kit := install(rtPath, client.InstallCapabilityRequest{Name: "kit", Version: "1.0.0"})
	mem := install(rtPath, client.InstallCapabilityRequest{Name: "memory", Source: "catalog",
		Config: &client.BindingConfig{Flags: map[string]bool{"memory": false}}})
	if mem.Config.Flags["memory"] || len(mem.Config.Flags) != 1 {
		t.Fatalf("memory binding config: %+v", mem.Config)
	}
	res := resolvedOf(t, env, rtPath)
	if res.Path != "/workspace/.paddock/capabilities" || res.RuntimeID == "" || len(res.Bindings) != 3 ||
		itemNames(res.Agents) != "code-reviewer<repo-tools" || itemNames(res.Skills) != "repo-map<repo-tools,memory<memory" ||
		itemNames(res.Tools) != "repo-map<repo-tools,kit-tool<kit" || len(res.MCPServers) != 0 || len(res.Conflicts) != 0 ||
		len(res.Checks) != 2 {
		t.Fatalf("resolved, memory flag off: %+v", res)
	}
	for _, b := range res.Bindings {
		if b.Status == nil || b.Status.State != client.BindingPending {
			t.Errorf("resolved binding %s without a sandbox: %+v", b.Name, b.Status)
		}
	}
	if res.Tools[1].Path != "/workspace/.paddock/capabilities/bin/kit-tool" || res.Agents[0].Path != "/workspace/.claude/agents/code-reviewer.md" {
		t.Errorf("resolved paths: %+v %+v", res.Tools, res.Agents)
	}

	patch := func(id string, want int, req any) client.CapabilityBinding {
		t.Helper()
		var b client.CapabilityBinding
		r := env.Must(t, want, "PATCH", rtPath+"/capabilities/"+id, req)
		if want == 200 {
			r.Decode(t, &b)
		}
		return b
	}
	// The flag on: the gated MCP server appears, in the bundle's directory.
	if b := patch(mem.ID, 200, client.UpdateBindingRequest{Config: &client.BindingConfig{Flags: map[string]bool{"memory": true}}}); !b.Config.Flags["memory"] {
		t.Fatalf("flag on: %+v", b)
	}
	res = resolvedOf(t, env, rtPath)
	if len(res.MCPServers) != 1 || res.MCPServers[0].Name != "memory" || res.MCPServers[0].Capability != "memory" ||
		res.MCPServers[0].Type != "stdio" || res.MCPServers[0].Command != "python3" ||
		strings.Join(res.MCPServers[0].Args, " ") != "/workspace/.paddock/capabilities/memory/mcp/memory.py" {
		t.Fatalf("resolved MCP servers, flag on: %+v", res.MCPServers)
	}
	// Config is replaced whole: none is the defaults (memory on).
	if b := patch(mem.ID, 200, client.UpdateBindingRequest{Config: &client.BindingConfig{}}); len(b.Config.Flags) != 0 {
		t.Fatalf("config cleared: %+v", b.Config)
	}
	if res = resolvedOf(t, env, rtPath); len(res.MCPServers) != 1 {
		t.Fatalf("resolved MCP servers, flag by default: %+v", res.MCPServers)
	}
	// Disabled: gone from the resolved set, still listed.
	if b := patch(mem.ID, 200, client.UpdateBindingRequest{Enabled: &f}); b.Enabled {
		t.Fatalf("disable: %+v", b)
	}
	res = resolvedOf(t, env, rtPath)
	if len(res.Bindings) != 2 || len(res.MCPServers) != 0 || itemNames(res.Skills) != "repo-map<repo-tools" {
		t.Fatalf("resolved with memory disabled: %+v", res)
	}
	if got := bindingNames(t, env, rtPath); got != "repo-tools@1.0.0 kit@1.0.0 memory@1.0.0,disabled" {
		t.Fatalf("bindings: %s", got)
	}
	tr := true
	patch(mem.ID, 200, client.UpdateBindingRequest{Enabled: &tr})
	// The pin moves; a flag it lacks is refused.
	if b := patch(kit.ID, 200, client.UpdateBindingRequest{Version: "1.2.0", Config: &client.BindingConfig{Flags: map[string]bool{"verbose": true}}}); b.Version != "1.2.0" || !b.Config.Flags["verbose"] {
		t.Fatalf("re-pinned: %+v", b)
	}
	beforeRefusals := bindingNames(t, env, rtPath)
	for _, tc := range []struct {
		name   string
		id     string
		req    any
		status int
		code   string
	}{
		{"a flag the bundle lacks", kit.ID, client.UpdateBindingRequest{Config: &client.BindingConfig{Flags: map[string]bool{"loud": true}}}, 400, "unknown_flag"},
		{"a flag on a catalog bundle without flags", tools.ID, client.UpdateBindingRequest{Config: &client.BindingConfig{Flags: map[string]bool{"memory": true}}}, 400, "unknown_flag"},
		{"an unknown version", kit.ID, client.UpdateBindingRequest{Version: "7.7.7"}, 404, "capability_not_found"},
		{"an unknown catalog version", tools.ID, client.UpdateBindingRequest{Version: "2.0.0"}, 404, "capability_not_found"},
		{"an unknown binding", uuid.NewString(), client.UpdateBindingRequest{Enabled: &f}, 404, "binding_not_found"},
		{"not an id", "nope", client.UpdateBindingRequest{Enabled: &f}, 404, "binding_not_found"},
		{"an unknown field", kit.ID, map[string]any{"pinned": true}, 400, "unknown_field"},
	} {
		t.Run("patch: "+tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, "PATCH", rtPath+"/capabilities/"+tc.id, tc.req), tc.status, tc.code)
			if got := bindingNames(t, env, rtPath); got != beforeRefusals {
				t.Fatalf("bindings after a refused patch: %s, want %s", got, beforeRefusals)
			}
		})
	}
	for _, b := range bindingsOf(t, env, rtPath) {
		if b.ID == kit.ID && (!b.Config.Flags["verbose"] || len(b.Config.Flags) != 1) {
			t.Fatalf("kit's flags after refused patches: %+v", b.Config)
		}
	}

	// A binding of another runtime is not found here, for PATCH or DELETE.
	other := newRuntime(t, env, "other")
	theirs := install(other, client.InstallCapabilityRequest{Name: "repo-tools"})
	wantError(t, env.Do(t, "PATCH", rtPath+"/capabilities/"+theirs.ID, client.UpdateBindingRequest{Enabled: &f}), 404, "binding_not_found")
	wantError(t, env.Do(t, "DELETE", rtPath+"/capabilities/"+theirs.ID, nil), 404, "binding_not_found")
	if got := bindingNames(t, env, other); got != "repo-tools@1.0.0" {
		t.Fatalf("the other runtime's bindings: %s", got)
	}

	// Bindings live on the runtime: a start (no agent on the fake: they
	// stay pending) and a reset keep them.
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	after := bindingsOf(t, env, rtPath)
	if len(after) != 3 || after[0].ID != tools.ID || after[1].ID != kit.ID || after[2].ID != mem.ID {
		t.Fatalf("bindings after reset: %+v", after)
	}
	for _, b := range after {
		if b.Status == nil || b.Status.State != client.BindingPending {
			t.Errorf("binding %s after reset: %+v", b.Name, b.Status)
		}
	}

	// Uninstall: 204, then not found.
	env.Must(t, 204, "DELETE", rtPath+"/capabilities/"+kit.ID, nil)
	wantError(t, env.Do(t, "DELETE", rtPath+"/capabilities/"+kit.ID, nil), 404, "binding_not_found")
	wantError(t, env.Do(t, "PATCH", rtPath+"/capabilities/"+kit.ID, client.UpdateBindingRequest{Enabled: &tr}), 404, "binding_not_found")
	if got := bindingNames(t, env, rtPath); got != "repo-tools@1.0.0 memory@1.0.0" {
		t.Fatalf("bindings after uninstall: %s", got)
	}
	if res = resolvedOf(t, env, rtPath); itemNames(res.Tools) != "repo-map<repo-tools" {
		t.Fatalf("tools after uninstall: %+v", res.Tools)
	}
	// The unpinned inventory version can go now.
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/capabilities/kit/1.2.0", nil)

	// Unknown runtimes.
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+uuid.NewString()+"/capabilities", nil), 404, "runtime_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+uuid.NewString()+"/capabilities/resolved", nil), 404, "runtime_not_found")
}

// TestCapabilityConflicts: two enabled bindings may not ship the same
// agent, skill or MCP server name; the second installs disabled, and
// enabling it is refused too.
func TestCapabilityConflicts(t *testing.T) {
	env, _, _ := setup(t)
	for _, tc := range []struct {
		kind    string
		against string // the catalog capability it collides with
		bundle  []capFile
	}{
		{"agent", "repo-tools", []capFile{
			{name: "capability.yaml", body: capManifest("rival-agent", "1.0.0", "agents:\n  - agents/code-reviewer.md\n")},
			{name: "agents/code-reviewer.md", body: "---\nname: code-reviewer\ndescription: Another reviewer.\n---\nReview.\n"},
		}},
		{"skill", "repo-tools", []capFile{
			{name: "capability.yaml", body: capManifest("rival-skill", "1.0.0", "skills:\n  - skills/repo-map\n")},
			{name: "skills/repo-map/SKILL.md", body: "---\nname: repo-map\ndescription: Another map.\n---\nMap.\n"},
		}},
		{"mcp_server", "memory", []capFile{
			{name: "capability.yaml", body: capManifest("rival-mcp", "1.0.0", "mcp_servers:\n  memory: {command: python3}\n")},
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			v := pushCap(t, env, "acme", 201, capTarGz(t, tc.bundle...))
			rt := newRuntime(t, env, "conflict-"+strings.ReplaceAll(tc.kind, "_", "-"))
			env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: tc.against})

			r := env.Do(t, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: v.Name})
			wantError(t, r, 409, "capability_conflict")
			var e client.Error
			r.Decode(t, &e)
			if !strings.Contains(e.Message, tc.kind) || !strings.Contains(e.Message, tc.against) || !strings.Contains(e.Message, v.Name) {
				t.Errorf("conflict message %q names neither the kind nor both capabilities", e.Message)
			}
			if got := bindingNames(t, env, rt); got != tc.against+"@1.0.0" {
				t.Fatalf("bindings after a refused install: %s", got)
			}

			f, tr := false, true
			var b client.CapabilityBinding
			env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: v.Name, Enabled: &f}).Decode(t, &b)
			wantError(t, env.Do(t, "PATCH", rt+"/capabilities/"+b.ID, client.UpdateBindingRequest{Enabled: &tr}), 409, "capability_conflict")
			if got := bindingNames(t, env, rt); got != tc.against+"@1.0.0 "+v.Name+"@1.0.0,disabled" {
				t.Fatalf("bindings after a refused enable: %s", got)
			}
			if res := resolvedOf(t, env, rt); len(res.Conflicts) != 0 || len(res.Bindings) != 1 {
				t.Fatalf("resolved with the rival disabled: %+v", res)
			}
		})
	}

	// A flag that gates a server off avoids the conflict; turning it on
	// is refused.
	t.Run("a flag turned on", func(t *testing.T) {
		rt := newRuntime(t, env, "conflict-flag")
		env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "rival-mcp"})
		wantError(t, env.Do(t, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "memory", Source: "catalog"}), 409, "capability_conflict")
		var b client.CapabilityBinding
		env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "memory", Source: "catalog",
			Config: &client.BindingConfig{Flags: map[string]bool{"memory": false}}}).Decode(t, &b)
		for _, cfg := range []*client.BindingConfig{{Flags: map[string]bool{"memory": true}}, {}} {
			wantError(t, env.Do(t, "PATCH", rt+"/capabilities/"+b.ID, client.UpdateBindingRequest{Config: cfg}), 409, "capability_conflict")
		}
		res := resolvedOf(t, env, rt)
		if len(res.MCPServers) != 1 || res.MCPServers[0].Capability != "rival-mcp" || len(res.Conflicts) != 0 {
			t.Fatalf("resolved: %+v", res)
		}
	})
	// A version that ships a taken name is refused; the pin stays.
	t.Run("a version moved", func(t *testing.T) {
		pushCap(t, env, "acme", 201, capTarGz(t, capFile{name: "capability.yaml", body: capManifest("rival", "1.0.0", "")}))
		pushCap(t, env, "acme", 201, capTarGz(t,
			capFile{name: "capability.yaml", body: capManifest("rival", "2.0.0", "tools:\n  - {name: repo-map, path: repo-map, description: Another map.}\n")},
			capFile{name: "repo-map", body: "#!/bin/sh\n"},
		))
		rt := newRuntime(t, env, "conflict-version")
		env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "repo-tools"})
		var b client.CapabilityBinding
		env.Must(t, 201, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "rival", Version: "1.0.0"}).Decode(t, &b)
		wantError(t, env.Do(t, "PATCH", rt+"/capabilities/"+b.ID, client.UpdateBindingRequest{Version: "2.0.0"}), 409, "capability_conflict")
		if got := bindingNames(t, env, rt); got != "repo-tools@1.0.0 rival@1.0.0" {
			t.Fatalf("bindings after a refused re-pin: %s", got)
		}
		wantError(t, env.Do(t, "POST", rt+"/capabilities", client.InstallCapabilityRequest{Name: "rival"}), 409, "capability_already_installed")
	})
}

// TestCapabilityNewestIsARelease: an install without a version takes the
// newest release, as the catalog does (capability.FromCatalog), and a
// pre-release only when there is no release.
func TestCapabilityNewestIsARelease(t *testing.T) {
	env, _, rtPath := setup(t)
	pushCap(t, env, "acme", 201, kitBundle(t, "1.0.0", "one"))
	pushCap(t, env, "acme", 201, kitBundle(t, "2.0.0-rc.1", "rc"))
	pushCap(t, env, "acme", 201, capTarGz(t, capFile{name: "capability.yaml", body: capManifest("beta", "0.2.0-beta.1", "")}))
	pushCap(t, env, "acme", 201, capTarGz(t, capFile{name: "capability.yaml", body: capManifest("beta", "0.2.0-beta.2", "")}))
	for _, tc := range []struct{ name, want string }{{"beta", "0.2.0-beta.2"}, {"kit", "1.0.0"}} {
		var b client.CapabilityBinding
		env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: tc.name}).Decode(t, &b)
		if b.Version != tc.want {
			t.Errorf("install %s without a version pinned %s, want %s (the newest release, as from the catalog)", tc.name, b.Version, tc.want)
		}
	}
}

// TestCapabilityBindingsGoWithTheProject: deleting a project deletes its
// runtime's bindings, which then pin nothing.
func TestCapabilityBindingsGoWithTheProject(t *testing.T) {
	env, p, rtPath := setup(t)
	pushCap(t, env, "acme", 201, kitBundle(t, "1.0.0", "one"))
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "kit"})
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "memory"})
	wantError(t, env.Do(t, "DELETE", "/api/v1/org/acme/capabilities/kit/1.0.0", nil), 409, "capability_in_use")

	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	bs, err := env.Store.ListBindings(context.Background(), p.RuntimeID)
	if err != nil || len(bs) != 0 {
		t.Fatalf("bindings of a deleted project's runtime: %+v, %v", bs, err)
	}
	wantError(t, env.Do(t, "GET", rtPath+"/capabilities", nil), 404, "runtime_not_found")
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/capabilities/kit/1.0.0", nil)
}

// TestBindingStatusFollowsTheSandbox: a binding's status is of the
// runtime's current sandbox: applied there, or pending again once the
// runtime has none (a reset) or a new one, keeping the old sandbox's id.
// The fake has no agent to apply with, so the status a successful apply
// records is written to the store here.
func TestBindingStatusFollowsTheSandbox(t *testing.T) {
	env, _, rtPath := setup(t)
	var b client.CapabilityBinding
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "repo-tools"}).Decode(t, &b)
	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	if err := env.Bindings.Wait(context.Background(), rt.ID); err != nil {
		t.Fatal(err)
	}
	old := rt.CurrentSandboxID
	at := time.Now().UTC()
	applied, err := json.Marshal(map[string]any{
		"state": client.BindingApplied, "sandbox_id": old, "applied_at": at, "rev": 1,
		"setup": []any{}, "checks": []any{}, "workers": []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.SetBindingStatus(context.Background(), b.ID, applied, at); err != nil {
		t.Fatal(err)
	}
	state := func() (string, string) {
		t.Helper()
		bs := bindingsOf(t, env, rtPath)
		res := resolvedOf(t, env, rtPath)
		if len(bs) != 1 || bs[0].ID != b.ID || len(res.Bindings) != 1 ||
			res.Bindings[0].Status.State != bs[0].Status.State || res.Bindings[0].Status.SandboxID != bs[0].Status.SandboxID {
			t.Fatalf("bindings %+v, resolved %+v", bs, res.Bindings)
		}
		return bs[0].Status.State, bs[0].Status.SandboxID
	}
	if st, sb := state(); st != client.BindingApplied || sb != old {
		t.Fatalf("on the sandbox it was applied to: %s %s", st, sb)
	}
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	if st, sb := state(); st != client.BindingPending || sb != old {
		t.Fatalf("on a runtime without a sandbox: %s %s, want pending %s", st, sb, old)
	}
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	if st, sb := state(); st != client.BindingPending || sb != old {
		t.Fatalf("on a new sandbox: %s %s, want pending %s", st, sb, old)
	}
}
