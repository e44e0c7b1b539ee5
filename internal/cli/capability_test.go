package cli_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Bundles of the org's inventory the capability tests install: browser
// and web both ship MCP server playwright.
var (
	browserBundle = map[string]string{"capability.yaml": manifest("browser", "1.0.0",
		"mcp_servers:\n  playwright:\n    command: npx\n    args: [\"@playwright/mcp\"]\n",
		"workers:\n  - name: chromium\n    run: \"sleep 100\"\n",
		"flags:\n  headless:\n    description: headless\n    default: true\n")}
	gitBundle = func(version string) map[string]string {
		return map[string]string{"capability.yaml": manifest("git", version,
			"skills:\n  - skills/commit\n",
			"dependencies:\n  checks:\n    - name: git\n      run: command -v git\n",
			"flags:\n  push:\n    description: push\n  fetch:\n    description: fetch\n    default: true\n"),
			"skills/commit/SKILL.md": "---\nname: commit\ndescription: commits\n---\n# Commit\n"}
	}
	webBundle = map[string]string{"capability.yaml": manifest("web", "1.0.0",
		"mcp_servers:\n  playwright:\n    command: npx\n    args: [\"@playwright/mcp\"]\n")}
)

// pushBundles pushes the bundles to the inventory of env's org.
func pushBundles(t *testing.T, env map[string]string, bundles ...map[string]string) {
	t.Helper()
	for _, b := range bundles {
		clitest.MustRun(t, env, "inventory", "push", writeTree(t, b))
	}
}

// setStatus records status as the last apply of the binding of name on
// the runtime of project agent, as the binding service records it.
func setStatus(t *testing.T, a *apiServer, name string, status *client.BindingStatus) {
	t.Helper()
	rt := get[client.Runtime](t, a, agentRuntime(t, a))
	bs, err := a.Store.ListBindings(t.Context(), rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(bs, func(b store.CapabilityBinding) bool { return b.Name == name })
	var data []byte
	if status != nil {
		status.SandboxID = rt.CurrentSandboxID
		data, _ = json.Marshal(struct {
			*client.BindingStatus
			Rev int64 `json:"rev"`
		}{status, bs[i].Rev})
	}
	if err := a.Store.SetBindingStatus(t.Context(), bs[i].ID, data, a.Clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// capStep is one step of TestCapabilityCommands; "{name}" arguments are
// the id of the binding of name.
type capStep struct {
	name   string
	args   []string
	code   int
	stderr string // a line stderr must contain
	setup  func(t *testing.T)
	check  func(t *testing.T, out string)
}

const (
	bindingsRoute = "/api/v1/org/{org}/ws/{ws}/runtimes/{id}/capabilities"
	bindingRoute  = bindingsRoute + "/{binding_id}"
)

// TestCapabilityCommands drives the capability commands through one
// runtime's life against the real API, with bundles of the org's
// inventory: each step runs after the one before.
func TestCapabilityCommands(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	pushBundles(t, env, browserBundle, gitBundle("1.0.0"), gitBundle("1.1.0"))
	steps := slices.Concat(catalogSteps(f, env), installSteps(f), bindingSteps(f, env), resolvedSteps(f, env))
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.setup != nil {
				st.setup(t)
			}
			args := slices.Clone(st.args)
			for i, arg := range args {
				if name, ok := strings.CutPrefix(arg, "{"); ok {
					args[i] = bindingID(t, f, strings.TrimSuffix(name, "}"))
				}
			}
			out, errOut, code := clitest.Run(t, env, args...)
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

// agentRuntime is the path of the runtime of project agent.
func agentRuntime(t *testing.T, a *apiServer) string {
	t.Helper()
	return "/api/v1/org/acme/ws/dev/runtimes/" + get[client.Project](t, a, "/api/v1/org/acme/ws/dev/projects/agent").RuntimeID
}

// bindingID is the id of the binding of name on the runtime of agent.
func bindingID(t *testing.T, a *apiServer, name string) string {
	t.Helper()
	l := get[client.List[client.CapabilityBinding]](t, a, agentRuntime(t, a)+"/capabilities")
	for _, b := range l.Items {
		if b.Name == name {
			return b.ID
		}
	}
	t.Fatalf("no binding of %s: %+v", name, l.Items)
	return ""
}

func catalogSteps(f *apiServer, env map[string]string) []capStep {
	return []capStep{
		{
			name: "catalog", args: []string{"catalog", "ls"},
			check: func(t *testing.T, out string) {
				rows, catalog := table(out), capability.Catalog()
				if len(rows) != 1+len(catalog) || strings.Join(rows[0], " ") != "NAME VERSION SHIPS DESCRIPTION" || rows[1][0] != catalog[0].Name {
					t.Fatalf("catalog:\n%s", out)
				}
				// What a version ships, as the inventory shows it too.
				inv := clitest.MustRun(t, env, "inventory", "ls")
				if !strings.Contains(inv, "1 mcp server, 1 worker, 1 flag") || !strings.Contains(inv, "1 skill, 1 check, 2 flags") {
					t.Fatalf("inventory:\n%s", inv)
				}
			},
		},
	}
}

func installSteps(f *apiServer) []capStep {
	return []capStep{
		{
			name: "install with a flag", args: []string{"capability", "install", "agent", "git", "--flag", "push=true"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				if d["NAME"] != "git" || d["VERSION"] != "1.1.0" || d["SOURCE"] != "inventory" || d["ENABLED"] != "true" || d["FLAGS"] != "push=true" || d["STATUS"] != "pending" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST "+bindingsRoute), `{"name":"git","config":{"flags":{"push":true}}}`)
			},
		},
		{
			name: "install with an unknown flag", args: []string{"capability", "install", "agent", "browser", "--flag", "turbo=true"},
			code: cli.ExitError, stderr: "(unknown_flag)",
		},
		{
			// A second later, so that it is listed after git.
			setup: func(*testing.T) { f.Clock.Advance(time.Second) },
			name:  "install a pinned version, disabled", args: []string{"capability", "install", "agent", "browser@1.0.0", "--source", "inventory", "--disabled", "-o", "json"},
			check: func(t *testing.T, out string) {
				if b := decode[client.CapabilityBinding](t, out); b.Name != "browser" || b.Enabled {
					t.Fatalf("binding = %+v", b)
				}
				jsonEq(t, f.body("POST "+bindingsRoute), `{"name":"browser","version":"1.0.0","source":"inventory","enabled":false}`)
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
	}
}

func bindingSteps(f *apiServer, env map[string]string) []capStep {
	exit3 := 3
	return []capStep{
		{
			name: "list with statuses", args: []string{"capability", "ls", "agent"},
			setup: func(t *testing.T) {
				setStatus(t, f, "git", &client.BindingStatus{State: client.BindingApplied,
					Checks:  []client.StepResult{{Name: "git", OK: false, ExitCode: 1}, {Name: "config", OK: true}},
					Workers: []client.WorkerStatus{{Name: "indexer", State: client.WorkerExited, ExitCode: &exit3}, {Name: "web", State: client.WorkerRunning}}})
				setStatus(t, f, "browser", &client.BindingStatus{State: client.BindingApplied})
			},
			check: func(t *testing.T, out string) {
				want := "NAME     VERSION  SOURCE     ENABLED  STATUS\n" +
					"git      1.1.0    inventory  true     check failed: git; worker exited: indexer (exit 3)\n" +
					"browser  1.0.0    inventory  false    applied\n"
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
				jsonEq(t, f.body("PATCH "+bindingRoute), `{"enabled":true}`)
			},
		},
		{
			name: "disable by id", args: []string{"capability", "disable", "agent", "{browser}"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["NAME"] != "browser" || d["ENABLED"] != "false" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+bindingRoute), `{"enabled":false}`)
			},
		},
		{
			name: "config merges flags", args: []string{"capability", "config", "agent", "git", "--flag", "fetch=false"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["FLAGS"] != "fetch=false push=true" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+bindingRoute), `{"config":{"flags":{"fetch":false,"push":true}}}`)
			},
		},
		{
			name: "config resets flags and moves the version", args: []string{"capability", "config", "agent", "git", "--reset", "--version", "1.0.0"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["FLAGS"] != "-" || d["VERSION"] != "1.0.0" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("PATCH "+bindingRoute), `{"config":{},"version":"1.0.0"}`)
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
	}
}

func resolvedSteps(f *apiServer, env map[string]string) []capStep {
	return []capStep{
		{
			name: "resolved, with a conflict", args: []string{"capability", "resolved", "agent"},
			// web, installed while browser is disabled, and browser,
			// enabled again behind the API's back (which refuses a
			// conflict), both ship playwright.
			setup: func(t *testing.T) {
				pushBundles(t, env, webBundle)
				f.Clock.Advance(time.Second) // installed last
				clitest.MustRun(t, env, "capability", "install", "agent", "web")
				b, err := f.Store.GetBinding(t.Context(), bindingID(t, f, "browser"))
				if err != nil {
					t.Fatal(err)
				}
				b.Enabled = true
				if _, err := f.Store.UpdateBinding(t.Context(), b); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, _ string) { checkResolved(t, env) },
		},
		{
			name: "uninstall", args: []string{"capability", "rm", "agent", "git"},
			setup: func(t *testing.T) { clitest.MustRun(t, env, "capability", "rm", "agent", "web") },
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
}

// checkResolved holds capability resolved to what browser, git and web
// resolve to.
func checkResolved(t *testing.T, env map[string]string) {
	out, errOut, code := clitest.Run(t, env, "capability", "resolved", "agent")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := [][]string{
		{"materialized", "under", "/workspace/.paddock/capabilities"},
		{},
		{"KIND", "NAME", "CAPABILITY", "DETAIL"},
		{"skill", "commit", "git", "commits"},
		{"mcp_server", "playwright", "browser", "stdio", "npx", "@playwright/mcp"},
		{"worker", "chromium", "browser", "-"},
		{"check", "git", "git", "-"},
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
}

// TestBindingStatus: each state of a binding in one cell of capability ls.
func TestBindingStatus(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	pushBundles(t, env, gitBundle("1.0.0"))
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
			setStatus(t, f, "git", tt.status)
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
	t.Parallel()
	f, env := startCapabilities(t)
	clitest.MustRun(t, env, "project", "create", "desk", "--capabilities", "computer_use,all_harness")
	jsonEq(t, f.body("POST /api/v1/org/{org}/ws/{ws}/projects"), `{"name":"desk","runtime":{"capabilities_json":"[\"computer_use\",\"all_harness\"]"}}`)

	const patch = "PATCH /api/v1/org/{org}/ws/{ws}/runtimes/{id}"
	clitest.MustRun(t, env, "runtime", "start", "agent") // so that the change waits for the next start
	out, errOut, code := clitest.Run(t, env, "runtime", "set", "agent", "--capabilities", "computer_use")
	if code != cli.ExitOK || detail(out)["CAPABILITIES"] != `["computer_use"]` || errOut != "applied at the next start: image, capabilities_json\n" {
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
	t.Parallel()
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
