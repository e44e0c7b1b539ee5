package cli_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

// fakeID is the fake API's n-th id.
func fakeID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

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

// TestScenario drives every noun through one life: each step runs after
// the one before it, against the same fake API.
func TestScenario(t *testing.T) {
	f, url := startFakeAPI(t)
	env := clitest.Env(url, goodKey)
	scoped := clitest.Env(url, goodKey)
	scoped["PADDOCK_ORG"], scoped["PADDOCK_WS"] = "acme", "dev"

	// Ids in order of creation: org 1, workspace 2, project 3 and its
	// runtime 4, project 5 and its runtime 6, then sandboxes.
	orgID, wsID, projID, rtID := fakeID(1), fakeID(2), fakeID(3), fakeID(4)
	sb1 := fakeID(7)
	const rtRoute = "/api/v1/org/{org}/ws/{ws}/runtimes/{id}"

	steps := []struct {
		name    string
		env     map[string]string
		args    []string
		code    int
		stderr  string // exact, when code != 0
		check   func(t *testing.T, out string)
		checkFn func(t *testing.T)
	}{
		{
			name: "create org", env: env, args: []string{"org", "create", "acme"},
			check: func(t *testing.T, out string) {
				d := detail(out)
				if d["ID"] != orgID || d["NAME"] != "acme" || d["CREATED"] != fakeNow {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "create the org again", env: env, args: []string{"org", "create", "acme"},
			code: cli.ExitError, stderr: "error: an org named \"acme\" already exists (org_exists)\n",
		},
		{
			name: "create a badly named org", env: env, args: []string{"org", "create", "Bad Name"},
			code: cli.ExitError, stderr: "error: org name \"Bad Name\" is not a slug (invalid_name)\n",
		},
		{
			name: "list orgs", env: env, args: []string{"org", "ls"},
			check: func(t *testing.T, out string) {
				want := [][]string{{"ID", "NAME", "CREATED"}, {orgID, "acme", fakeNow}}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "get org as JSON", env: env, args: []string{"org", "get", "acme", "-o", "json"},
			check: func(t *testing.T, out string) {
				if o := decode[client.Org](t, out); o.ID != orgID || o.Name != "acme" {
					t.Fatalf("org = %+v", o)
				}
			},
		},
		{
			name: "get a missing org", env: env, args: []string{"org", "get", "nope"},
			code: cli.ExitError, stderr: "error: org \"nope\" not found (org_not_found)\n",
		},
		{
			name: "create workspace", env: env, args: []string{"workspace", "create", "dev", "--org", "acme"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["ID"] != wsID || d["ORG_ID"] != orgID {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "list workspaces with the org from the environment", env: scoped, args: []string{"ws", "ls"},
			check: func(t *testing.T, out string) {
				want := [][]string{{"ID", "NAME", "CREATED"}, {wsID, "dev", fakeNow}}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "get the default workspace", env: scoped, args: []string{"workspace", "get"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["NAME"] != "dev" {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "create a project with runtime settings", env: scoped,
			args: []string{"project", "create", "agent", "--image", "img:1", "--cpu", "0.5", "--memory", "1G", "--disk", "20G",
				"--idle-timeout", "30m", "--description", "does things", "--network", "none", "--pids-limit", "64"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["ID"] != projID || d["RUNTIME"] != rtID || d["DESCRIPTION"] != "does things" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST /api/v1/org/{org}/ws/{ws}/projects"), `{"name":"agent","description":"does things",
					"runtime":{"image":"img:1","cpu_millis":500,"memory_mb":1024,"pids_limit":64,"disk_mb":20480,"network":{"mode":"none"},"idle_timeout_seconds":1800}}`)
			},
		},
		{
			name: "create a project with defaults", env: scoped, args: []string{"project", "create", "bare"},
			check: func(t *testing.T, _ string) {
				jsonEq(t, f.body("POST /api/v1/org/{org}/ws/{ws}/projects"), `{"name":"bare"}`)
			},
		},
		{
			name: "list projects", env: env, args: []string{"project", "ls", "--org", "acme", "--ws", "dev"},
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"ID", "NAME", "RUNTIME", "CREATED"},
					{projID, "agent", rtID, fakeNow},
					{fakeID(5), "bare", fakeID(6), fakeNow},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
		{
			name: "list runtimes", env: scoped, args: []string{"runtime", "ls"},
			check: func(t *testing.T, out string) {
				rows := table(out)
				want := []string{"ID", "PROJECT", "STATUS", "PAUSE", "SANDBOX", "IMAGE", "EXPIRES", "UPDATED"}
				if !reflect.DeepEqual(rows[0], want) || len(rows) != 3 {
					t.Fatalf("table = %q", rows)
				}
				if want := []string{rtID, "agent", "idle", "-", "-", "img:1", "-", fakeNow}; !reflect.DeepEqual(rows[1], want) {
					t.Fatalf("row = %q, want %q", rows[1], want)
				}
			},
		},
		{
			name: "pause a runtime without a sandbox", env: scoped, args: []string{"runtime", "pause", "agent"},
			code: cli.ExitError, stderr: "error: the runtime has no sandbox; start it first (runtime_has_no_sandbox)\n",
		},
		{
			name: "start a runtime by project name with secrets", env: scoped,
			args: []string{"runtime", "start", "agent", "--secret", "gh", "--secret", "npm,pypi"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["STATUS"] != "running" || d["SANDBOX"] != sb1 || d["CPU"] != "0.5" || d["MEMORY"] != "1024M" || d["IDLE_TIMEOUT"] != "30m0s" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST "+rtRoute+"/start"), `{"secret_ids":["gh","npm","pypi"]}`)
			},
		},
		{
			name: "start it again", env: scoped, args: []string{"runtime", "start", rtID},
			code: cli.ExitError, stderr: "error: the runtime already has a sandbox (runtime_already_running)\n",
			checkFn: func(t *testing.T) { jsonEq(t, f.body("POST "+rtRoute+"/start"), `{}`) },
		},
		{
			name: "pause by runtime id", env: scoped, args: []string{"runtime", "pause", rtID, "-o", "json"},
			check: func(t *testing.T, out string) {
				if rt := decode[client.Runtime](t, out); rt.Status != "paused" || rt.PauseReason != "user" {
					t.Fatalf("runtime = %+v", rt)
				}
			},
		},
		{
			name: "resume", env: scoped, args: []string{"runtime", "resume", "agent"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["STATUS"] != "running" || d["PAUSE_REASON"] != "-" {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "resume a running runtime", env: scoped, args: []string{"runtime", "resume", "agent"},
			code: cli.ExitError, stderr: "error: the runtime is running (runtime_not_paused)\n",
		},
		{
			name: "keepalive", env: scoped, args: []string{"runtime", "keepalive", "agent", "--duration", "90s"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["EXPIRES"] != "2026-03-04T05:07:37Z" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST "+rtRoute+"/keepalive"), `{"duration_seconds":90}`)
			},
		},
		{
			name: "keepalive with the default duration", env: scoped, args: []string{"runtime", "keepalive", "agent"},
			checkFn: func(t *testing.T) { jsonEq(t, f.body("POST "+rtRoute+"/keepalive"), `{}`) },
		},
		{
			name: "get a runtime of a missing project", env: scoped, args: []string{"runtime", "get", "ghost"},
			code: cli.ExitError, stderr: "error: project \"ghost\" not found (project_not_found)\n",
		},
		{
			name: "list sandboxes", env: scoped, args: []string{"sandbox", "ls"},
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"ID", "KIND", "STATE", "PAUSE", "PROVIDER", "PROVIDER_ID", "PROJECT", "BILLED", "ESTIMATED", "CREATED"},
					{sb1, "runtime", "running", "-", "fake", "fakesandbox0", "agent", "0.2500", "0.3750", fakeNow},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q\nwant %q", got, want)
				}
			},
		},
		{
			name: "list sandboxes with filters", env: scoped,
			args: []string{"sandbox", "ls", "--kind", "runtime", "--state", "running", "--provider", "fake", "--runtime", rtID, "--limit", "5", "--cursor", "0"},
			check: func(t *testing.T, out string) {
				if got := len(table(out)); got != 2 {
					t.Fatalf("%d rows:\n%s", got, out)
				}
				want := "cursor=0&kind=runtime&limit=5&provider=fake&runtime_id=" + rtID + "&state=running"
				if got := f.query("GET /api/v1/org/{org}/sandboxes"); got != want {
					t.Fatalf("query = %q, want %q", got, want)
				}
			},
		},
		{
			name: "get a sandbox by provider id", env: scoped, args: []string{"sandbox", "get", "fakesandbox000000000000000000007"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["ID"] != sb1 || d["SECRETS"] != "3" || d["RUNNING"] != "0.1250" {
					t.Fatalf("details = %v", d)
				}
			},
		},
		{
			name: "kill a sandbox", env: scoped, args: []string{"sb", "kill", sb1, "-o", "json"},
			check: func(t *testing.T, out string) {
				if sb := decode[client.Sandbox](t, out); sb.State != "killed" {
					t.Fatalf("sandbox = %+v", sb)
				}
			},
		},
		{
			name: "restart", env: scoped, args: []string{"runtime", "start", "agent"},
		},
		{
			name: "reset wiping the workspace", env: scoped, args: []string{"runtime", "reset", "agent", "--wipe-workspace"},
			check: func(t *testing.T, out string) {
				if d := detail(out); d["STATUS"] != "idle" || d["SANDBOX"] != "-" {
					t.Fatalf("details = %v", d)
				}
				jsonEq(t, f.body("POST "+rtRoute+"/reset"), `{"wipe_workspace":true}`)
			},
		},
		{
			name: "list killed sandboxes as JSON", env: scoped, args: []string{"sandbox", "ls", "--state", "killed", "-o", "json"},
			check: func(t *testing.T, out string) {
				l := decode[client.List[client.Sandbox]](t, out)
				if len(l.Items) != 2 || l.Items[0].KillReason != "reset" || l.Items[1].KillReason != "user" {
					t.Fatalf("list = %+v", l)
				}
			},
		},
		{
			name: "delete projects", env: scoped, args: []string{"project", "rm", "agent", fakeID(5)},
			check: func(t *testing.T, out string) {
				if want := "deleted project agent\ndeleted project " + fakeID(5) + "\n"; out != want {
					t.Fatalf("out = %q", out)
				}
			},
		},
		{
			name: "get a deleted project", env: scoped, args: []string{"project", "get", "agent"},
			code: cli.ExitError, stderr: "error: project \"agent\" not found (project_not_found)\n",
		},
		{
			name: "capabilities", env: env, args: []string{"capabilities"},
			check: func(t *testing.T, out string) {
				want := [][]string{
					{"PROVIDER", "ISOLATION", "PAUSE", "AGENT", "SNAPSHOT", "WRITABLE_ROOT", "NETWORKS"},
					{"docker", "container", "true", "true", "false", "true", "none,open"},
					{"fake", "(default)", "none", "true", "false", "false", "false", "none"},
				}
				if got := table(out); !reflect.DeepEqual(got, want) {
					t.Fatalf("table = %q", got)
				}
			},
		},
	}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, st.env, st.args...)
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
			if st.checkFn != nil {
				st.checkFn(t)
			}
		})
		if !ok {
			t.FailNow() // later steps build on this one
		}
	}
}
