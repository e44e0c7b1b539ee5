package cli_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// table splits a table's output into rows of fields.
func table(out string) [][]string { return clitest.Table(out) }

// detail reads "NAME: value" lines.
func detail(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		k, v, _ := strings.Cut(line, ":")
		m[k] = strings.TrimSpace(v)
	}
	return m
}

func decode[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return v
}

// mustFail runs the CLI, wants exit code want and stderr holding each of
// wants, and returns stderr.
func mustFail(t *testing.T, env map[string]string, want int, wants []string, args ...string) string {
	t.Helper()
	out, errOut, code := clitest.Run(t, env, args...)
	if code != want {
		t.Fatalf("paddock %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	for _, w := range wants {
		if !strings.Contains(errOut, w) {
			t.Fatalf("paddock %s: stderr %q, want it to contain %q", strings.Join(args, " "), errOut, w)
		}
	}
	return errOut
}

func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("bad JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad JSON %q: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("body = %s, want %s", got, want)
	}
}

// scenario is one life of every noun against one real API: each step runs
// after the one before it. ids holds what the server named along the way
// ("org", "rt", "sb", ...); a step's "{name}" arguments are replaced by
// them.
type scenario struct {
	a           *apiServer
	env, scoped map[string]string
	ids         map[string]string
}

type step struct {
	name   string
	env    map[string]string
	args   []string
	code   int
	stderr string // exact, when code != 0
	setup  func(t *testing.T)
	check  func(t *testing.T, out string)
}

// TestScenario drives every noun through one life: each step runs after
// the one before it, against the same real API, billed at 0.01 credits a
// core-second with 50 s prepaid, offering the fake provider and a second
// one named docker.
func TestScenario(t *testing.T) {
	t.Parallel()
	a := startAPI(t, servertest.Options{
		Provider:      declared{fake.New(fake.Config{NoSnapshot: true, NoWritableRoot: true}), fakeCaps},
		MoreProviders: []provider.Provider{declared{fake.New(fake.Config{Name: "docker"}), dockerCaps}},
		AllowedImages: []string{"img:*"},
		Pricing:       &ledger.Pricing{Default: ledger.Rate{CPUMicros: 10_000}, FirstSlice: 50 * time.Second},
		NewOrgMicros:  100 * ledger.MicrosPerCredit,
	})
	s := &scenario{a: a, env: clitest.Env(a.URL, a.Key), scoped: clitest.Env(a.URL, a.Key), ids: map[string]string{}}
	s.scoped["PADDOCK_ORG"], s.scoped["PADDOCK_WS"] = "acme", "dev"
	steps := slices.Concat(s.orgSteps(), s.projectSteps(), s.runtimeSteps(), s.sandboxSteps(), s.endSteps())
	for _, st := range steps {
		if !t.Run(st.name, func(t *testing.T) { s.run(t, st) }) {
			t.FailNow() // later steps build on this one
		}
	}
}

// The capabilities the providers declare: isolation, which the fake
// names "fake", as a user's providers name theirs.
var (
	fakeCaps   = provider.Capabilities{Isolation: "none", Pause: true, Networks: []provider.NetworkPolicy{provider.NetworkNone}}
	dockerCaps = provider.Capabilities{Isolation: "container", Pause: true, Agent: true, WritableRoot: true,
		Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkOpen}}
)

// declared is a provider that declares other capabilities than the fake's.
type declared struct {
	provider.Provider
	caps provider.Capabilities
}

func (d declared) Capabilities() provider.Capabilities { return d.caps }

func (s *scenario) run(t *testing.T, st step) {
	if st.setup != nil {
		st.setup(t)
	}
	args := make([]string, len(st.args))
	for i, arg := range st.args {
		if name, ok := strings.CutPrefix(arg, "{"); ok {
			arg = s.ids[strings.TrimSuffix(name, "}")]
		}
		args[i] = arg
	}
	out, errOut, code := clitest.Run(t, st.env, args...)
	if code != st.code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, st.code, out, errOut)
	}
	if st.code != 0 && errOut != st.stderr {
		t.Fatalf("stderr = %q, want %q", errOut, st.stderr)
	}
	if st.code == 0 && errOut != "" {
		t.Fatalf("stderr = %q", errOut)
	}
	if st.check != nil {
		st.check(t, out)
	}
}

// get decodes what the server answers to GET path.
func get[T any](t *testing.T, a *apiServer, path string) T {
	t.Helper()
	var v T
	a.Must(t, 200, "GET", path, nil).Decode(t, &v)
	return v
}

func (s *scenario) orgSteps() []step {
	return []step{
		{
			name: "create org", env: s.env, args: []string{"org", "create", "acme"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				if o := get[client.Org](t, s.a, "/api/v1/org/acme"); d["ID"] != o.ID || d["NAME"] != "acme" || d["CREATED"] != fakeNow {
					t.Fatalf("details = %v, the server holds %+v", d, o)
				}
				s.ids["org"] = d["ID"]
			},
		},
		{
			name: "create the org again", env: s.env, args: []string{"org", "create", "acme"},
			code: cli.ExitError, stderr: "error: an org named \"acme\" already exists (org_exists)\n",
		},
		{
			name: "create a badly named org", env: s.env, args: []string{"org", "create", "Bad Name"},
			code: cli.ExitError, stderr: "error: org name \"Bad Name\" must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit (invalid_name)\n",
		},
		{
			name: "list orgs", env: s.env, args: []string{"org", "ls"},
			check: func(t *testing.T, out string) {
				want := [][]string{{"ID", "NAME", "CREATED"}, {s.ids["org"], "acme", fakeNow}}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "get org as JSON", env: s.env, args: []string{"org", "get", "acme", "-o", "json"},
			check: func(t *testing.T, out string) {
				if o := decode[client.Org](t, out); o.ID != s.ids["org"] || o.Name != "acme" {
					t.Fatalf("org = %+v", o)
				}
			},
		},
		{
			name: "get a missing org", env: s.env, args: []string{"org", "get", "nope"},
			code: cli.ExitError, stderr: "error: org \"nope\" not found (org_not_found)\n",
		},
		{
			name: "create workspace", env: s.env, args: []string{"workspace", "create", "dev", "--org", "acme"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				if w := get[client.Workspace](t, s.a, "/api/v1/org/acme/ws/dev"); d["ID"] != w.ID || d["ORG_ID"] != s.ids["org"] {
					t.Fatalf("details = %v, the server holds %+v", d, w)
				}
				s.ids["ws"] = d["ID"]
			},
		},
		{
			name: "list workspaces with the org from the environment", env: s.scoped, args: []string{"ws", "ls"},
			check: func(t *testing.T, out string) {
				want := [][]string{{"ID", "NAME", "CREATED"}, {s.ids["ws"], "dev", fakeNow}}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "get the default workspace", env: s.scoped, args: []string{"workspace", "get"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["NAME"] != "dev" {
					t.Fatalf("details = %v", d)
				}
			},
		},
	}
}

const (
	projectsRoute = "/api/v1/org/{org}/ws/{ws}/projects"
	rtRoute       = "/api/v1/org/{org}/ws/{ws}/runtimes/{id}"
)

func (s *scenario) projectSteps() []step {
	return []step{
		{
			name: "create a project with runtime settings", env: s.scoped,
			args: []string{"project", "create", "agent", "--image", "img:1", "--cpu", "0.5", "--memory", "1G", "--disk", "20G",
				"--idle-timeout", "30m", "--description", "does things", "--network", "none", "--pids-limit", "64"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				p := get[client.Project](t, s.a, "/api/v1/org/acme/ws/dev/projects/agent")
				if d["ID"] != p.ID || d["RUNTIME"] != p.RuntimeID || d["DESCRIPTION"] != "does things" {
					t.Fatalf("details = %v, the server holds %+v", d, p)
				}
				s.ids["proj"], s.ids["rt"] = p.ID, p.RuntimeID
				jsonEq(t, s.a.body("POST "+projectsRoute), `{"name":"agent","description":"does things",
					"runtime":{"image":"img:1","cpu_millis":500,"memory_mb":1024,"pids_limit":64,"disk_mb":20480,"network":{"mode":"none"},"idle_timeout_seconds":1800}}`)
			},
		},
		{
			name: "create a project with defaults", env: s.scoped, args: []string{"project", "create", "bare"},
			// A second later, so that it is listed second.
			setup: func(*testing.T) { s.a.Clock.Advance(time.Second) },
			check: func(t *testing.T, out string) {
				s.ids["bare"], s.ids["bare_rt"] = detail(out)["ID"], detail(out)["RUNTIME"]
				jsonEq(t, s.a.body("POST "+projectsRoute), `{"name":"bare"}`)
			},
		},
		{
			name: "list projects", env: s.env, args: []string{"project", "ls", "--org", "acme", "--ws", "dev"},
			setup: func(*testing.T) { s.a.Clock.Advance(-time.Second) },
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"ID", "NAME", "RUNTIME", "CREATED"},
					{s.ids["proj"], "agent", s.ids["rt"], fakeNow},
					{s.ids["bare"], "bare", s.ids["bare_rt"], "2026-03-04T05:06:08Z"},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "list runtimes", env: s.scoped, args: []string{"runtime", "ls"},
			check: func(t *testing.T, out string) {
				rows := table(out)
				want := []string{"ID", "PROJECT", "STATUS", "PAUSE", "SANDBOX", "IMAGE", "EXPIRES", "UPDATED"}
				if !reflect.DeepEqual(rows[0], want) || len(rows) != 3 {
					t.Fatalf("table = %q", rows)
				}
				if want := []string{s.ids["rt"], "agent", "idle", "-", "-", "img:1", "-", fakeNow}; !reflect.DeepEqual(rows[1], want) {
					t.Fatalf("row = %q, want %q", rows[1], want)
				}
			},
		},
		{
			name: "pause a runtime without a sandbox", env: s.scoped, args: []string{"runtime", "pause", "agent"},
			code: cli.ExitError, stderr: "error: runtime agent has no sandbox (status idle); start it first (runtime_has_no_sandbox)\n",
		},
	}
}

func (s *scenario) runtimeSteps() []step {
	return []step{
		{
			name: "start a runtime by project name with secrets", env: s.scoped,
			setup: func(t *testing.T) {
				for _, name := range []string{"gh", "npm", "pypi"} {
					s.a.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: name, Value: "v", Env: strings.ToUpper(name) + "_TOKEN"})
				}
			},
			args: []string{"runtime", "start", "agent", "--secret", "gh", "--secret", "npm,pypi"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				rt := get[client.Runtime](t, s.a, "/api/v1/org/acme/ws/dev/runtimes/"+s.ids["rt"])
				if d["STATUS"] != "running" || d["SANDBOX"] != rt.CurrentSandboxID || d["CPU"] != "0.5" || d["MEMORY"] != "1024M" || d["IDLE_TIMEOUT"] != "30m0s" {
					t.Fatalf("details = %v, the server holds %+v", d, rt)
				}
				sb := get[client.Sandbox](t, s.a, "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID)
				s.ids["sb"], s.ids["sbp"] = sb.ID, sb.ProviderSandboxID
				jsonEq(t, s.a.body("POST "+rtRoute+"/start"), `{"secret_ids":["gh","npm","pypi"]}`)
			},
		},
		{
			name: "start it again", env: s.scoped, args: []string{"runtime", "start", "{rt}"},
			code: cli.ExitError, stderr: "error: runtime agent is already running (runtime_already_running)\n",
			check: func(t *testing.T, _ string) { jsonEq(t, s.a.body("POST "+rtRoute+"/start"), `{}`) },
		},
		{
			name: "pause by runtime id", env: s.scoped, args: []string{"runtime", "pause", "{rt}", "-o", "json"},
			check: func(t *testing.T, out string) {
				if rt := decode[client.Runtime](t, out); rt.Status != "paused" || rt.PauseReason != "user" {
					t.Fatalf("runtime = %+v", rt)
				}
			},
		},
		{
			name: "resume", env: s.scoped, args: []string{"runtime", "resume", "agent"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["STATUS"] != "running" || d["PAUSE_REASON"] != "-" {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "resume a running runtime", env: s.scoped, args: []string{"runtime", "resume", "agent"},
			code: cli.ExitError, stderr: "error: runtime agent is running, not paused (runtime_not_paused)\n",
		},
		{
			// Past the 30 minutes of idle time the start gave it: keepalive
			// never shortens a sandbox's life.
			name: "keepalive", env: s.scoped, args: []string{"runtime", "keepalive", "agent", "--duration", "45m"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["EXPIRES"] != "2026-03-04T05:51:07Z" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, s.a.body("POST "+rtRoute+"/keepalive"), `{"duration_seconds":2700}`)
			},
		},
		{
			name: "keepalive with the default duration", env: s.scoped, args: []string{"runtime", "keepalive", "agent"},
			check: func(t *testing.T, _ string) { jsonEq(t, s.a.body("POST "+rtRoute+"/keepalive"), `{}`) },
		},
		{
			name: "get a runtime of a missing project", env: s.scoped, args: []string{"runtime", "get", "ghost"},
			code: cli.ExitError, stderr: "error: project \"ghost\" not found (project_not_found)\n",
		},
	}
}

func (s *scenario) sandboxSteps() []step {
	return []step{
		{
			name: "list sandboxes", env: s.scoped, args: []string{"sandbox", "ls"},
			setup: func(*testing.T) { s.a.Clock.Advance(75 * time.Second) },
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"ID", "KIND", "STATE", "PAUSE", "PROVIDER", "PROVIDER_ID", "PROJECT", "BILLED", "ESTIMATED", "CREATED"},
					{s.ids["sb"], "runtime", "running", "-", "fake", s.ids["sbp"][:12], "agent", "0.2500", "0.3750", fakeNow},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q\nwant %q", got, want)
				}
			},
		},
		{
			name: "list sandboxes with filters", env: s.scoped,
			args: []string{"sandbox", "ls", "--kind", "runtime", "--state", "running", "--provider", "fake", "--runtime", "{rt}", "--limit", "5"},
			check: func(t *testing.T, out string) {
				if got := len(table(out)); got != 2 {
					t.Fatalf("%d rows:\n%s", got, out)
				}
				want := "kind=runtime&limit=5&provider=fake&runtime_id=" + s.ids["rt"] + "&state=running"
				if got := s.a.query("GET /api/v1/org/{org}/sandboxes"); got != want {
					t.Fatalf("query = %q, want %q", got, want)
				}
			},
		},
		{
			name: "get a sandbox by provider id", env: s.scoped, args: []string{"sandbox", "get", "{sbp}"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["ID"] != s.ids["sb"] || d["SECRETS"] != "3" || d["RUNNING"] != "0.1250" {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "kill a sandbox", env: s.scoped, args: []string{"sb", "kill", "{sb}", "-o", "json"},
			check: func(t *testing.T, out string) {
				if sb := decode[client.Sandbox](t, out); sb.State != "killed" {
					t.Fatalf("sandbox = %+v", sb)
				}
			},
		},
		{
			name: "restart", env: s.scoped, args: []string{"runtime", "start", "agent"},
		},
		{
			name: "reset wiping the workspace", env: s.scoped, args: []string{"runtime", "reset", "agent", "--wipe-workspace"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["STATUS"] != "idle" || d["SANDBOX"] != "-" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, s.a.body("POST "+rtRoute+"/reset"), `{"wipe_workspace":true}`)
			},
		},
		{
			name: "list killed sandboxes as JSON", env: s.scoped, args: []string{"sandbox", "ls", "--state", "killed", "-o", "json"},
			check: func(t *testing.T, out string) {
				l := decode[client.List[client.Sandbox]](t, out)
				if len(l.Items) != 2 || l.Items[0].KillReason != "reset" || l.Items[1].KillReason != "deleted" {
					t.Fatalf("list = %+v", l)
				}
			},
		},
	}
}

func (s *scenario) endSteps() []step {
	return []step{
		{
			name: "delete projects", env: s.scoped, args: []string{"project", "rm", "agent", "{bare}"},
			check: func(t *testing.T, out string) {
				if want := "deleted project agent\ndeleted project " + s.ids["bare"] + "\n"; out != want {
					t.Fatalf("out = %q", out)
				}
			},
		},
		{
			name: "get a deleted project", env: s.scoped, args: []string{"project", "get", "agent"},
			code: cli.ExitError, stderr: "error: project \"agent\" not found (project_not_found)\n",
		},
		{
			name: "capabilities", env: s.env, args: []string{"capabilities"},
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"PROVIDER", "ISOLATION", "PAUSE", "AGENT", "SNAPSHOT", "WRITABLE_ROOT", "NETWORKS"},
					{"docker", "container", "true", "true", "false", "true", "none,open"},
					{"fake", "(default)", "none", "true", "false", "false", "false", "none"},
				}
				// The providers' table comes first; the server's harnesses
				// and sidecars follow it.
				providers, _, _ := strings.Cut(out, "\n\n")
				if got := table(providers); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
	}
}
