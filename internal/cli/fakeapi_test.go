package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/pkg/client"
)

// fakeAPI mimics the routes the CLI calls, in memory, well enough to test
// the CLI's encoding, output and error handling. It is not the server: the
// server's own behaviour is tested against the real thing.
type fakeAPI struct {
	key string

	mu         sync.Mutex
	seq        int
	orgs       []client.Org
	workspaces []client.Workspace
	projects   []client.Project
	runtimes   []*client.Runtime
	sandboxes  []*client.Sandbox
	// bodies holds the last JSON body sent to each route pattern.
	bodies map[string]string
	// queries holds the last query string sent to each route pattern.
	queries map[string]string
}

const goodKey = "pdk_good"

// fakeID is the fake API's n-th id.
func fakeID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func startFakeAPI(t *testing.T) (*fakeAPI, string) {
	t.Helper()
	f := &fakeAPI{key: goodKey, bodies: map[string]string{}, queries: map[string]string{}}
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func now() time.Time {
	ts, _ := time.Parse(time.RFC3339, fakeNow)
	return ts
}

func (f *fakeAPI) id() string {
	f.seq++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq)
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(client.Error{Code: code, Message: msg, RequestID: "req-1"})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// page cuts items by ?cursor= (an index) and ?limit=.
func page[T any](r *http.Request, items []T) client.List[T] {
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	out := client.List[T]{Items: []T{}}
	for i := start; i < len(items) && i < start+limit; i++ {
		out.Items = append(out.Items, items[i])
	}
	if start+limit < len(items) {
		out.NextCursor = strconv.Itoa(start + limit)
	}
	return out
}

func (f *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+f.key {
				fail(w, 401, "invalid_api_key", "the API key is not valid")
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			var raw json.RawMessage
			f.bodies[pattern] = ""
			if err := json.NewDecoder(r.Body).Decode(&raw); err == nil {
				f.bodies[pattern] = string(raw)
			}
			f.queries[pattern] = r.URL.RawQuery
			h(w, r)
		})
	}
	const ws = "/api/v1/org/{org}/ws/{ws}"
	const rt = ws + "/runtimes/{id}"

	handle("GET /api/capabilities", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, client.Capabilities{Version: "9.9.9", DefaultProvider: "fake", Providers: map[string]client.ProviderCapability{
			"fake":   {Isolation: "none", Pause: true, Agent: false, Networks: []string{"none"}},
			"docker": {Isolation: "container", Pause: true, Agent: true, Networks: []string{"none", "open"}, WritableRoot: true},
		}})
	})
	handle("POST /api/v1/orgs", func(w http.ResponseWriter, r *http.Request) {
		var req client.CreateOrgRequest
		_ = json.Unmarshal([]byte(f.bodies["POST /api/v1/orgs"]), &req)
		if !slugRE.MatchString(req.Name) {
			fail(w, 400, "invalid_name", fmt.Sprintf("org name %q is not a slug", req.Name))
			return
		}
		if _, ok := f.org(req.Name); ok {
			fail(w, 409, "org_exists", fmt.Sprintf("an org named %q already exists", req.Name))
			return
		}
		o := client.Org{ID: f.id(), Name: req.Name, CreatedAt: now()}
		f.orgs = append(f.orgs, o)
		reply(w, 201, o)
	})
	handle("GET /api/v1/orgs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, page(r, f.orgs))
	})
	handle("GET /api/v1/org/{org}", func(w http.ResponseWriter, r *http.Request) {
		if o, ok := f.orgOf(w, r); ok {
			reply(w, 200, o)
		}
	})
	handle("POST /api/v1/org/{org}/ws", func(w http.ResponseWriter, r *http.Request) {
		o, ok := f.orgOf(w, r)
		if !ok {
			return
		}
		var req client.CreateWorkspaceRequest
		_ = json.Unmarshal([]byte(f.bodies["POST /api/v1/org/{org}/ws"]), &req)
		wsp := client.Workspace{ID: f.id(), OrgID: o.ID, Name: req.Name, CreatedAt: now()}
		f.workspaces = append(f.workspaces, wsp)
		reply(w, 201, wsp)
	})
	handle("GET /api/v1/org/{org}/ws", func(w http.ResponseWriter, r *http.Request) {
		o, ok := f.orgOf(w, r)
		if !ok {
			return
		}
		var out []client.Workspace
		for _, x := range f.workspaces {
			if x.OrgID == o.ID {
				out = append(out, x)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("GET "+ws, func(w http.ResponseWriter, r *http.Request) {
		if _, x, ok := f.wsOf(w, r); ok {
			reply(w, 200, x)
		}
	})
	handle("POST "+ws+"/projects", func(w http.ResponseWriter, r *http.Request) {
		o, x, ok := f.wsOf(w, r)
		if !ok {
			return
		}
		var req client.CreateProjectRequest
		_ = json.Unmarshal([]byte(f.bodies["POST "+ws+"/projects"]), &req)
		p := client.Project{ID: f.id(), OrgID: o.ID, WorkspaceID: x.ID, Name: req.Name, Description: req.Description, CreatedAt: now()}
		run := &client.Runtime{ID: f.id(), OrgID: o.ID, WorkspaceID: x.ID, ProjectID: p.ID, ProjectName: p.Name, Status: client.RuntimeIdle, CreatedAt: now(), UpdatedAt: now()}
		if req.Runtime != nil {
			run.Config = *req.Runtime
		}
		p.RuntimeID = run.ID
		f.projects = append(f.projects, p)
		f.runtimes = append(f.runtimes, run)
		reply(w, 201, p)
	})
	handle("GET "+ws+"/projects", func(w http.ResponseWriter, r *http.Request) {
		_, x, ok := f.wsOf(w, r)
		if !ok {
			return
		}
		var out []client.Project
		for _, p := range f.projects {
			if p.WorkspaceID == x.ID {
				out = append(out, p)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("GET "+ws+"/projects/{project}", func(w http.ResponseWriter, r *http.Request) {
		if _, p, ok := f.projectOf(w, r); ok {
			reply(w, 200, p)
		}
	})
	handle("DELETE "+ws+"/projects/{project}", func(w http.ResponseWriter, r *http.Request) {
		i, _, ok := f.projectOf(w, r)
		if !ok {
			return
		}
		f.projects = append(f.projects[:i], f.projects[i+1:]...)
		w.WriteHeader(204)
	})
	handle("GET "+ws+"/runtimes", func(w http.ResponseWriter, r *http.Request) {
		_, x, ok := f.wsOf(w, r)
		if !ok {
			return
		}
		var out []client.Runtime
		for _, run := range f.runtimes {
			if run.WorkspaceID == x.ID {
				out = append(out, *run)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("GET "+rt, func(w http.ResponseWriter, r *http.Request) {
		if run, ok := f.runtimeOf(w, r); ok {
			reply(w, 200, run)
		}
	})
	handle("POST "+rt+"/start", func(w http.ResponseWriter, r *http.Request) {
		run, ok := f.runtimeOf(w, r)
		if !ok {
			return
		}
		if run.CurrentSandboxID != "" {
			fail(w, 409, "runtime_already_running", "the runtime already has a sandbox")
			return
		}
		var req client.StartRuntimeRequest
		_ = json.Unmarshal([]byte(f.bodies["POST "+rt+"/start"]), &req)
		exp := now().Add(15 * time.Minute)
		sb := &client.Sandbox{
			ID: f.id(), OrgID: run.OrgID, WorkspaceID: run.WorkspaceID, ProjectID: run.ProjectID, ProjectName: run.ProjectName, RuntimeID: run.ID,
			Kind: client.KindRuntime, State: client.SandboxRunning, Provider: "fake",
			ProviderSandboxID: fmt.Sprintf("fakesandbox%021d", f.seq), Image: run.Config.Image,
			SecretIDs: req.SecretIDs, BilledCredits: 0.25, RunningCredits: 0.125, EstimatedTotalCredits: 0.375,
			CreatedAt: now(), UpdatedAt: now(), ExpiresAt: &exp,
		}
		f.sandboxes = append([]*client.Sandbox{sb}, f.sandboxes...)
		run.CurrentSandboxID, run.Status, run.ExpiresAt = sb.ID, client.RuntimeRunning, &exp
		reply(w, 200, run)
	})
	handle("POST "+rt+"/pause", func(w http.ResponseWriter, r *http.Request) {
		f.transition(w, r, client.RuntimeRunning, "runtime_not_running", func(run *client.Runtime, sb *client.Sandbox) {
			run.Status, run.PauseReason = client.RuntimePaused, client.PauseUser
			sb.State, sb.PauseReason = client.SandboxPaused, client.PauseUser
		})
	})
	handle("POST "+rt+"/resume", func(w http.ResponseWriter, r *http.Request) {
		f.transition(w, r, client.RuntimePaused, "runtime_not_paused", func(run *client.Runtime, sb *client.Sandbox) {
			run.Status, run.PauseReason = client.RuntimeRunning, ""
			sb.State, sb.PauseReason = client.SandboxRunning, ""
		})
	})
	handle("POST "+rt+"/reset", func(w http.ResponseWriter, r *http.Request) {
		f.transition(w, r, "", "", func(run *client.Runtime, sb *client.Sandbox) {
			sb.State, sb.KillReason = client.SandboxKilled, "reset"
			run.Status, run.PauseReason, run.CurrentSandboxID, run.ExpiresAt = client.RuntimeIdle, "", "", nil
		})
	})
	handle("POST "+rt+"/keepalive", func(w http.ResponseWriter, r *http.Request) {
		var req client.KeepaliveRequest
		_ = json.Unmarshal([]byte(f.bodies["POST "+rt+"/keepalive"]), &req)
		f.transition(w, r, "", "", func(run *client.Runtime, sb *client.Sandbox) {
			exp := now().Add(time.Duration(req.DurationSeconds) * time.Second)
			run.ExpiresAt, sb.ExpiresAt = &exp, &exp
		})
	})
	handle("GET /api/v1/org/{org}/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		o, ok := f.orgOf(w, r)
		if !ok {
			return
		}
		q := r.URL.Query()
		var out []client.Sandbox
		for _, sb := range f.sandboxes {
			if sb.OrgID == o.ID && match(q.Get("kind"), sb.Kind) && match(q.Get("state"), sb.State) &&
				match(q.Get("provider"), sb.Provider) && match(q.Get("runtime_id"), sb.RuntimeID) {
				out = append(out, *sb)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("GET /api/v1/org/{org}/sandboxes/{sandbox}", func(w http.ResponseWriter, r *http.Request) {
		if sb, ok := f.sandboxOf(w, r); ok {
			reply(w, 200, sb)
		}
	})
	handle("DELETE /api/v1/org/{org}/sandboxes/{sandbox}", func(w http.ResponseWriter, r *http.Request) {
		sb, ok := f.sandboxOf(w, r)
		if !ok {
			return
		}
		sb.State, sb.KillReason = client.SandboxKilled, "user"
		for _, run := range f.runtimes {
			if run.CurrentSandboxID == sb.ID {
				run.Status, run.CurrentSandboxID, run.ExpiresAt = client.RuntimeIdle, "", nil
			}
		}
		reply(w, 200, sb)
	})
	return mux
}

func match(want, got string) bool { return want == "" || want == got }

func (f *fakeAPI) org(name string) (client.Org, bool) {
	for _, o := range f.orgs {
		if o.Name == name {
			return o, true
		}
	}
	return client.Org{}, false
}

func (f *fakeAPI) orgOf(w http.ResponseWriter, r *http.Request) (client.Org, bool) {
	name := r.PathValue("org")
	o, ok := f.org(name)
	if !ok {
		fail(w, 404, "org_not_found", fmt.Sprintf("org %q not found", name))
	}
	return o, ok
}

func (f *fakeAPI) wsOf(w http.ResponseWriter, r *http.Request) (client.Org, client.Workspace, bool) {
	o, ok := f.orgOf(w, r)
	if !ok {
		return o, client.Workspace{}, false
	}
	name := r.PathValue("ws")
	for _, x := range f.workspaces {
		if x.OrgID == o.ID && x.Name == name {
			return o, x, true
		}
	}
	fail(w, 404, "workspace_not_found", fmt.Sprintf("workspace %q not found in org %q", name, o.Name))
	return o, client.Workspace{}, false
}

func (f *fakeAPI) projectOf(w http.ResponseWriter, r *http.Request) (int, client.Project, bool) {
	_, x, ok := f.wsOf(w, r)
	if !ok {
		return 0, client.Project{}, false
	}
	key := r.PathValue("project")
	for i, p := range f.projects {
		if p.WorkspaceID == x.ID && (p.Name == key || p.ID == key) {
			return i, p, true
		}
	}
	fail(w, 404, "project_not_found", fmt.Sprintf("project %q not found", key))
	return 0, client.Project{}, false
}

func (f *fakeAPI) runtimeOf(w http.ResponseWriter, r *http.Request) (*client.Runtime, bool) {
	_, x, ok := f.wsOf(w, r)
	if !ok {
		return nil, false
	}
	id := r.PathValue("id")
	for _, run := range f.runtimes {
		if run.WorkspaceID == x.ID && run.ID == id {
			return run, true
		}
	}
	fail(w, 404, "runtime_not_found", fmt.Sprintf("runtime %s not found", id))
	return nil, false
}

func (f *fakeAPI) sandboxOf(w http.ResponseWriter, r *http.Request) (*client.Sandbox, bool) {
	o, ok := f.orgOf(w, r)
	if !ok {
		return nil, false
	}
	key := r.PathValue("sandbox")
	for _, sb := range f.sandboxes {
		if sb.OrgID == o.ID && (sb.ID == key || sb.ProviderSandboxID == key) {
			return sb, true
		}
	}
	fail(w, 404, "sandbox_not_found", fmt.Sprintf("sandbox %q not found", key))
	return nil, false
}

// transition runs an action that needs a sandbox and, when from is set, a
// runtime in status from.
func (f *fakeAPI) transition(w http.ResponseWriter, r *http.Request, from, code string, act func(*client.Runtime, *client.Sandbox)) {
	run, ok := f.runtimeOf(w, r)
	if !ok {
		return
	}
	if run.CurrentSandboxID == "" {
		fail(w, 409, "runtime_has_no_sandbox", "the runtime has no sandbox; start it first")
		return
	}
	if from != "" && run.Status != from {
		fail(w, 409, code, fmt.Sprintf("the runtime is %s", run.Status))
		return
	}
	for _, sb := range f.sandboxes {
		if sb.ID == run.CurrentSandboxID {
			act(run, sb)
		}
	}
	reply(w, 200, run)
}

// body returns the last JSON body sent to a route pattern.
func (f *fakeAPI) body(pattern string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[pattern]
}

// query returns the last query sent to a route pattern.
func (f *fakeAPI) query(pattern string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[pattern]
}
