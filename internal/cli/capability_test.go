package cli_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestCapabilityCommands drives the capability commands through one
// runtime's life against the fake API: each step runs after the one before.
func TestCapabilityCommands(t *testing.T) {
	f, env := startCapabilityAPI(t)
	const (
		rtRoute = "/api/v1/org/{org}/ws/{ws}/runtimes/{id}/capabilities"
		binding = rtRoute + "/{binding_id}"
	)
	exit3 := 3
	steps := []struct {
		name   string
		args   []string
		code   int
		stderr string // a line stderr must contain
		check  func(t *testing.T, out string)
	}{
		{
			name: "catalog", args: []string{"catalog", "ls"},
			check: func(t *testing.T, out string) {
				rows := table(out)
				if len(rows) != 4 || strings.Join(rows[0], " ") != "NAME VERSION SHIPS DESCRIPTION" || rows[1][0] != "browser" ||
					!strings.Contains(out, "1 mcp server, 1 worker, 1 flag") || !strings.Contains(out, "2 skills, 1 check, 2 flags") {
					t.Fatalf("catalog:\n%s", out)
				}
			},
		},
		{
			name: "install with a flag", args: []string{"capability", "install", "agent", "git", "--flag", "push=true"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				if d["NAME"] != "git" || d["VERSION"] != "1.1.0" || d["SOURCE"] != "catalog" || d["ENABLED"] != "true" || d["FLAGS"] != "push=true" || d["STATUS"] != "pending" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST "+rtRoute), `{"name":"git","config":{"flags":{"push":true}}}`)
			},
		},
		{
			name: "install with an unknown flag", args: []string{"capability", "install", "agent", "browser", "--flag", "turbo=true"},
			code: cli.ExitError, stderr: "(unknown_flag)",
		},
		{
			name: "install a pinned version, disabled", args: []string{"capability", "install", "agent", "browser@1.0.0", "--source", "catalog", "--disabled", "-o", "json"},
			check: func(t *testing.T, out string) {
				if b := decode[client.CapabilityBinding](t, out); b.Name != "browser" || b.Enabled {
					t.Fatalf("binding = %+v", b)
				}
				jsonEq(t, f.body("POST "+rtRoute), `{"name":"browser","version":"1.0.0","source":"catalog","enabled":false}`)
			},
		},
		{
			name: "install it again", args: []string{"capability", "install", "agent", "git"},
			code: cli.ExitError, stderr: "(capability_already_installed)",
		},
		{
			name: "install an unknown one", args: []string{"capability", "install", "agent", "nope@2.0.0"},
			code: cli.ExitError, stderr: "(capability_not_found)",
		},
		{
			name: "a malformed flag", args: []string{"capability", "install", "agent", "git", "--flag", "push"},
			code: cli.ExitUsage, stderr: `--flag "push": want NAME=true or NAME=false`,
		},
		{
			name: "an unknown source", args: []string{"capability", "install", "agent", "git", "--source", "github"},
			code: cli.ExitUsage, stderr: `--source must be "catalog" or "inventory"`,
		},
		{
			name: "a version without a name", args: []string{"capability", "install", "agent", "@1.0.0"},
			code: cli.ExitUsage, stderr: `want NAME or NAME@VERSION`,
		},
		{
			name: "list with statuses", args: []string{"capability", "ls", "agent"},
			check: func(t *testing.T, _ string) {
				f.mu.Lock()
				f.bindings[0].Status = &client.BindingStatus{State: client.BindingApplied,
					Checks:  []client.StepResult{{Name: "git", OK: false, ExitCode: 1}, {Name: "config", OK: true}},
					Workers: []client.WorkerStatus{{Name: "indexer", State: client.WorkerExited, ExitCode: &exit3}, {Name: "web", State: client.WorkerRunning}}}
				f.bindings[1].Status = &client.BindingStatus{State: client.BindingApplied}
				f.mu.Unlock()
				out := clitest.MustRun(t, env, "capability", "ls", "agent")
				want := "NAME     VERSION  SOURCE   ENABLED  STATUS\n" +
					"git      1.1.0    catalog  true     check failed: git; worker exited: indexer (exit 3)\n" +
					"browser  1.0.0    catalog  false    applied\n"
				if out != want {
					t.Fatalf("ls:\n%s\nwant:\n%s", out, want)
				}
			},
		},
		{
			name: "enable by name", args: []string{"capability", "enable", "agent", "browser"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["ENABLED"] != "true" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+binding), `{"enabled":true}`)
			},
		},
		{
			name: "disable by id", args: []string{"capability", "disable", "agent", fakeID(6)},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["NAME"] != "browser" || d["ENABLED"] != "false" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+binding), `{"enabled":false}`)
			},
		},
		{
			name: "config merges flags", args: []string{"capability", "config", "agent", "git", "--flag", "fetch=false"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["FLAGS"] != "fetch=false push=true" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+binding), `{"config":{"flags":{"fetch":false,"push":true}}}`)
			},
		},
		{
			name: "config resets flags and moves the version", args: []string{"capability", "config", "agent", "git", "--reset", "--version", "1.0.0"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["FLAGS"] != "-" || d["VERSION"] != "1.0.0" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+binding), `{"config":{},"version":"1.0.0"}`)
			},
		},
		{
			name: "config without a change", args: []string{"capability", "config", "agent", "git"},
			code: cli.ExitUsage, stderr: "nothing to change",
		},
		{
			name: "an unknown binding", args: []string{"capability", "enable", "agent", "nope"},
			code: cli.ExitError, stderr: `error: no capability "nope" is installed on the runtime`,
		},
		{
			name: "resolved, with a conflict", args: []string{"capability", "resolved", "agent"},
			check: func(t *testing.T, _ string) {
				f.mu.Lock()
				f.resolved = client.ResolvedCapabilities{
					Path:       "/opt/paddock/capabilities",
					Skills:     []client.ResolvedItem{{Name: "commit", Capability: "git", Path: "/opt/paddock/capabilities/git/skills/commit"}},
					MCPServers: []client.ResolvedMCPServer{{Name: "playwright", Capability: "browser", Type: "stdio", Command: "npx", Args: []string{"@playwright/mcp"}}},
					Checks:     []client.ResolvedItem{{Name: "git", Capability: "git", Description: "git is on PATH"}},
					Conflicts:  []client.CapabilityConflict{{Kind: "mcp_server", Name: "playwright", Capabilities: []string{"browser", "web"}}},
				}
				f.mu.Unlock()
				out, errOut, code := clitest.Run(t, env, "capability", "resolved", "agent")
				if code != cli.ExitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				want := [][]string{
					{"materialized", "under", "/opt/paddock/capabilities"},
					{},
					{"KIND", "NAME", "CAPABILITY", "DETAIL"},
					{"skill", "commit", "git", "/opt/paddock/capabilities/git/skills/commit"},
					{"mcp_server", "playwright", "browser", "stdio", "npx", "@playwright/mcp"},
					{"check", "git", "git", "git", "is", "on", "PATH"},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("resolved:\n%s", out)
				}
				if errOut != "CONFLICT: mcp server \"playwright\" is shipped by browser and web; only the first installed is used\n" {
					t.Fatalf("stderr = %q", errOut)
				}
				rc := clitest.JSON[client.ResolvedCapabilities](t, env, "capability", "resolved", "agent")
				if len(rc.Conflicts) != 1 || len(rc.MCPServers) != 1 {
					t.Fatalf("JSON: %+v", rc)
				}
			},
		},
		{
			name: "uninstall", args: []string{"capability", "rm", "agent", "git"},
			check: func(t *testing.T, out string) {
				if out != "uninstalled capability git@1.0.0\n" {
					t.Fatalf("out = %q", out)
				}
				if rows := table(clitest.MustRun(t, env, "capability", "ls", "agent")); len(rows) != 2 || rows[1][0] != "browser" {
					t.Fatalf("after rm: %v", rows)
				}
			},
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, env, st.args...)
			if code != st.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, st.code, out, errOut)
			}
			if st.code != cli.ExitOK {
				if !strings.Contains(errOut, st.stderr) {
					t.Fatalf("stderr = %q, want it to contain %q", errOut, st.stderr)
				}
				return
			}
			if st.check != nil {
				st.check(t, out)
			}
		})
	}
}

// TestBindingStatus: each state of a binding in one cell of capability ls.
func TestBindingStatus(t *testing.T) {
	f, env := startCapabilityAPI(t)
	clitest.MustRun(t, env, "capability", "install", "agent", "git")
	exit1 := 1
	tests := []struct {
		status *client.BindingStatus
		want   string
	}{
		{nil, "pending"},
		{&client.BindingStatus{State: client.BindingPending}, "pending"},
		{&client.BindingStatus{State: client.BindingApplied, Workers: []client.WorkerStatus{{Name: "w", State: client.WorkerStopped}}}, "applied"},
		{&client.BindingStatus{State: client.BindingFailed, Error: "the bundle could not be written"}, "failed: the bundle could not be written"},
		{&client.BindingStatus{State: client.BindingFailed, Error: "setup failed", Setup: []client.StepResult{{Name: "install", ExitCode: 2}}}, "setup failed: install"},
		{&client.BindingStatus{State: client.BindingApplied, Checks: []client.StepResult{{Name: "a"}, {Name: "b"}}}, "check failed: a, b"},
		{&client.BindingStatus{State: client.BindingApplied, Workers: []client.WorkerStatus{{Name: "x", State: client.WorkerExited, ExitCode: &exit1}, {Name: "y", State: client.WorkerExited}}}, "worker exited: x (exit 1), y"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f.mu.Lock()
			f.bindings[0].Status = tt.status
			f.mu.Unlock()
			out := clitest.MustRun(t, env, "capability", "ls", "agent")
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) != 2 || !strings.HasSuffix(lines[1], "  "+tt.want) {
				t.Fatalf("ls:\n%s", out)
			}
		})
	}
}

// TestSidecarCapabilitiesFlag: --capabilities on project create and
// runtime set is sent as capabilities_json, a JSON-encoded list.
func TestSidecarCapabilitiesFlag(t *testing.T) {
	f, env := startCapabilityAPI(t)
	clitest.MustRun(t, env, "project", "create", "desk", "--capabilities", "computer_use,all_harness")
	jsonEq(t, f.body("POST /api/v1/org/{org}/ws/{ws}/projects"), `{"name":"desk","runtime":{"capabilities_json":"[\"computer_use\",\"all_harness\"]"}}`)

	const patch = "PATCH /api/v1/org/{org}/ws/{ws}/runtimes/{id}"
	out, errOut, code := clitest.Run(t, env, "runtime", "set", "agent", "--capabilities", "computer_use")
	if code != cli.ExitOK || detail(out)["CAPABILITIES"] != `["computer_use"]` || errOut != "applied at the next start: capabilities_json\n" {
		t.Fatalf("set: exit %d\n%s\n%s", code, out, errOut)
	}
	jsonEq(t, f.body(patch), `{"capabilities_json":"[\"computer_use\"]"}`)

	clitest.MustRun(t, env, "runtime", "set", "agent", "--capabilities", "", "--image", "img:2")
	jsonEq(t, f.body(patch), `{"capabilities_json":"[]","image":"img:2"}`)
}

// TestCapabilitiesAgainstTheServer runs the capability, inventory, prompt
// and session commands against the real API (whose answers the OpenAPI
// check holds to the document), with the fake provider: no sandbox agent,
// so bindings stay pending and prompts stop before a harness runs.
func TestCapabilitiesAgainstTheServer(t *testing.T) {
	_, env := cliOnServer(t, servertest.Options{})
	fails := func(code string, args ...string) {
		t.Helper()
		if _, errOut, exit := clitest.Run(t, env, args...); exit != cli.ExitError || !strings.HasSuffix(errOut, "("+code+")\n") {
			t.Fatalf("paddock %s: exit %d %q, want code %s", strings.Join(args, " "), exit, errOut, code)
		}
	}

	catalog := clitest.JSON[client.List[client.CapabilityVersion]](t, env, "catalog", "ls")
	if len(catalog.Items) == 0 {
		t.Fatal("the catalog is empty")
	}
	builtin := catalog.Items[0].Name

	dir := writeTree(t, map[string]string{"capability.yaml": "schema_version: 1\nname: pinger\nversion: 0.1.0\ndescription: pings\nworkers:\n  - name: ping\n    run: \"sleep 100\"\n"})
	out := clitest.MustRun(t, env, "inventory", "push", dir)
	if !strings.HasPrefix(out, "pinger@0.1.0 sha256:") || clitest.MustRun(t, env, "inventory", "push", dir) != out {
		t.Fatalf("push: %q", out)
	}
	fails("invalid_capability", "inventory", "push", t.TempDir())
	if l := clitest.JSON[client.List[client.CapabilityVersion]](t, env, "inventory", "ls", "pinger"); len(l.Items) != 1 || l.Items[0].Contents.Workers[0] != "ping" {
		t.Fatalf("inventory: %+v", l.Items)
	}

	fails("unknown_sidecar_capability", "project", "create", "bad", "--capabilities", "no_such_sidecar")
	clitest.MustRun(t, env, "project", "create", "agent", "--capabilities", "computer_use")
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent"); rt.Config.CapabilitiesJSON != `["computer_use"]` {
		t.Fatalf("capabilities_json = %q", rt.Config.CapabilitiesJSON)
	}

	clitest.MustRun(t, env, "capability", "install", "agent", builtin)
	clitest.MustRun(t, env, "capability", "install", "agent", "pinger@0.1.0", "--disabled")
	fails("capability_already_installed", "capability", "install", "agent", builtin)
	fails("capability_not_found", "capability", "install", "agent", "pinger@9.9.9")
	fails("unknown_flag", "capability", "config", "agent", "pinger", "--flag", "no-such-flag=true")
	rows := table(clitest.MustRun(t, env, "capability", "ls", "agent"))
	if len(rows) != 3 || strings.Join(rows[2], " ") != "pinger 0.1.0 inventory false pending" {
		t.Fatalf("ls:\n%v", rows)
	}
	clitest.MustRun(t, env, "capability", "enable", "agent", "pinger")
	rc := clitest.JSON[client.ResolvedCapabilities](t, env, "capability", "resolved", "agent")
	if len(rc.Bindings) != 2 || len(rc.Workers) != 1 || rc.Workers[0].Capability != "pinger" {
		t.Fatalf("resolved: %+v", rc)
	}
	fails("capability_in_use", "inventory", "rm", "pinger@0.1.0")
	clitest.MustRun(t, env, "capability", "rm", "agent", "pinger")
	clitest.MustRun(t, env, "inventory", "rm", "pinger@0.1.0")

	fails("harness_secret_missing", "prompt", "agent", "hi")
	fails("unknown_harness", "task", "agent", "hi", "--harness", "no-such-harness", "-o", "json")
	if rows := table(clitest.MustRun(t, env, "session", "ls", "agent")); len(rows) != 1 {
		t.Fatalf("sessions: %v", rows)
	}
	fails("session_not_found", "session", "show", "agent", "no-such-session")
}
