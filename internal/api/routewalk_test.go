package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	apispec "github.com/paddockhq/paddock/api"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/pkg/client"
)

// The route walk: every operation of api/openapi.yaml, called as callers
// who must be refused, each answer held to the access rules of authz.go
// and, through servertest, to the document itself.

// walkOp is one operation of the document, as the walk calls it.
type walkOp struct {
	id, method, path string
	role             string   // x-paddock-role
	query            []string // required query parameters
	contentType      string   // of its request body; "" when it takes none
}

// An instance route (/api/sandbox…) is in its runtime's org and
// workspace, as the runtime route it mirrors.
func (op walkOp) inOrg() bool       { return strings.Contains(op.path, "{org}") || op.instance() }
func (op walkOp) inWorkspace() bool { return strings.Contains(op.path, "{workspace}") || op.instance() }
func (op walkOp) instance() bool    { return strings.HasPrefix(op.path, "/api/sandbox") }

// meta is an operation outside /api: probes and scrapes, never rate
// limited.
func (op walkOp) meta() bool { return op.role == "public" && !strings.HasPrefix(op.path, "/api/") }

// walkParam is an OpenAPI parameter, or a reference to one.
type walkParam struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

// walkOps reads every operation of the document, in path order.
func walkOps(t *testing.T) []walkOp {
	t.Helper()
	raw, err := apispec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]walkParam `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(p walkParam) walkParam {
		if p.Ref == "" {
			return p
		}
		q, ok := doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
		if !ok {
			t.Fatalf("unresolved parameter %s", p.Ref)
		}
		return q
	}
	var ops []walkOp
	for path, item := range doc.Paths {
		var shared []walkParam
		if ps, ok := item["parameters"]; ok {
			if err := json.Unmarshal(ps, &shared); err != nil {
				t.Fatalf("%s: parameters: %v", path, err)
			}
		}
		for method, rawOp := range item {
			if method == "parameters" {
				continue
			}
			var o struct {
				ID          string      `json:"operationId"`
				Role        string      `json:"x-paddock-role"`
				Parameters  []walkParam `json:"parameters"`
				RequestBody *struct {
					Content map[string]json.RawMessage `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(rawOp, &o); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			if o.ID == "" {
				t.Fatalf("%s %s has no operationId", method, path)
			}
			op := walkOp{id: o.ID, method: strings.ToUpper(method), path: path, role: o.Role}
			for _, p := range append(slices.Clone(shared), o.Parameters...) {
				if p = resolve(p); p.In == "query" && p.Required {
					op.query = append(op.query, p.Name)
				}
			}
			if o.RequestBody != nil {
				types := slices.Sorted(maps.Keys(o.RequestBody.Content))
				op.contentType = types[0]
				if slices.Contains(types, "application/json") {
					op.contentType = "application/json"
				}
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].path != ops[j].path {
			return ops[i].path < ops[j].path
		}
		return ops[i].method < ops[j].method
	})
	return ops
}

// walkBodies are a valid body for each operation whose body has required
// fields, so that the answers to them are held to the document too; any
// other JSON body is {}, any other body a byte.
var walkBodies = map[string]string{
	"authChallenge":         `{"address":"0x00000000000000000000000000000000000000aa"}`,
	"createSession":         `{"nonce":"0123456789abcdef","signature":"0x00"}`,
	"createUser":            `{"email":"new@example.com"}`,
	"createOrg":             `{"name":"walk-new"}`,
	"addOrgMember":          `{"member":"new@example.com","role":"member"}`,
	"setOrgMemberRole":      `{"role":"member"}`,
	"createWorkspace":       `{"name":"walk-new"}`,
	"createProject":         `{"name":"walk-new"}`,
	"exec":                  `{"argv":["true"]}`,
	"execWorldMember":       `{"argv":["true"]}`,
	"createWorld":           `{"name":"walk","members":[{"name":"a"}]}`,
	"signalProcess":         `{"signal":"TERM"}`,
	"mkdir":                 `{"path":"/tmp/walk"}`,
	"rename":                `{"from":"/tmp/a","to":"/tmp/b"}`,
	"installCapability":     `{"name":"memory"}`,
	"prompt":                `{"prompt":"hello"}`,
	"task":                  `{"prompt":"hello"}`,
	"grantCredits":          `{"amount":1,"idempotency_key":"walk"}`,
	"setCreditBalance":      `{"balance":1,"idempotency_key":"walk"}`,
	"addMember":             `{"member":"new@example.com"}`,
	"setMemberLimit":        `{"member_limit":0}`,
	"createOrgSecret":       `{"name":"walk-new","value":"v"}`,
	"createWorkspaceSecret": `{"name":"walk-new","value":"v"}`,
}

// walkQueries are the values of required query parameters.
var walkQueries = map[string]string{"path": "/tmp"}

// walkAnswer is what an operation answered.
type walkAnswer struct {
	status int
	code   string
	header http.Header
	body   []byte
}

// is fails t unless the answer is status with one of codes (any code when
// none are given).
func (a walkAnswer) is(t *testing.T, status int, codes ...string) {
	t.Helper()
	if a.status != status || (len(codes) > 0 && !slices.Contains(codes, a.code)) {
		t.Errorf("answered %d %s, want %d %v: %s", a.status, a.code, status, codes, a.body)
	}
}

// through fails t unless the operation let the caller through: no 401 or
// 403, no 404 for the org or workspace, no server error.
func (a walkAnswer) through(t *testing.T) {
	t.Helper()
	if a.status == 401 || a.status == 403 || a.status == 500 || a.code == "org_not_found" || a.code == "workspace_not_found" {
		t.Errorf("answered %d %s, want the operation let through: %s", a.status, a.code, a.body)
	}
}

// walkCall calls op on env as key ("" sends no credentials), its path
// parameters from params, with the header name and value pairs hdr.
func walkCall(t *testing.T, env *servertest.Env, op walkOp, params map[string]string, key string, hdr ...string) walkAnswer {
	t.Helper()
	path := op.path
	for {
		i := strings.Index(path, "{")
		if i < 0 {
			break
		}
		j := strings.Index(path[i:], "}") + i
		v, ok := params[path[i+1:j]]
		if !ok {
			t.Fatalf("no fixture for path parameter %s of %s", path[i:j+1], op.id)
		}
		path = path[:i] + url.PathEscape(v) + path[j+1:]
	}
	if len(op.query) > 0 {
		q := url.Values{}
		for _, name := range op.query {
			v, ok := walkQueries[name]
			if !ok {
				t.Fatalf("no fixture for query parameter %s of %s", name, op.id)
			}
			q.Set(name, v)
		}
		path += "?" + q.Encode()
	}
	var body io.Reader
	switch {
	case op.contentType == "application/json":
		b, ok := walkBodies[op.id]
		if !ok {
			b = "{}"
		}
		body = strings.NewReader(b)
	case op.contentType != "":
		body = strings.NewReader("x")
	}
	req, err := http.NewRequestWithContext(t.Context(), op.method, env.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", op.contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", op.method, path, err)
	}
	defer resp.Body.Close()
	var b []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// An event stream goes on: its opening comment is the answer
		// (what it carries is held to the rules in events_test.go).
		b, err = bufio.NewReader(resp.Body).ReadBytes('\n')
	} else {
		b, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		t.Fatal(err)
	}
	return walkAnswer{status: resp.StatusCode, code: servertest.Response{Body: b}.Code(), header: resp.Header, body: b}
}

// walkRank orders what an operation needs, for "above viewer".
var walkRank = map[string]int{"viewer": 1, "member": 2, "admin": 3, "owner": 4, "installation": 5}

// walkWorld is what the walk calls operations on, and as.
type walkWorld struct {
	orgA, orgB client.Org
	wa, wb     client.Workspace
	runtimeID  string
	params     map[string]string // each path parameter's value
	// viewer is a viewer of org A and a member of wa; narrowed a member
	// of org A whose key is narrowed to wb; other org B's admin.
	viewer, narrowed, other client.CreatedKey
}

// newWalkWorld makes org A, with workspaces wa and wb, a running runtime in
// wa with a capability on it, an org secret and a workspace secret; org B;
// and their members' keys, through the API as an admin would.
func newWalkWorld(t *testing.T, env *servertest.Env) walkWorld {
	t.Helper()
	var w walkWorld
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "walk-a"}).Decode(t, &w.orgA)
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "walk-b"}).Decode(t, &w.orgB)
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws", client.CreateWorkspaceRequest{Name: "wa"}).Decode(t, &w.wa)
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws", client.CreateWorkspaceRequest{Name: "wb"}).Decode(t, &w.wb)
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws/wa/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	w.runtimeID = p.RuntimeID
	walkInstance.target.Store(&api.Sandbox{Org: "walk-a", Workspace: "wa", Runtime: p.RuntimeID})
	rtPath := "/api/v1/org/walk-a/ws/wa/runtimes/" + p.RuntimeID
	rt := runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/start", nil))
	if rt.CurrentSandboxID == "" {
		t.Fatalf("started runtime has no sandbox: %+v", rt)
	}
	var binding client.CapabilityBinding
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "repo-tools", Source: "catalog"}).Decode(t, &binding)
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/secrets", client.CreateSecretRequest{Name: "walk-token", Value: "org"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws/wa/secrets", client.CreateSecretRequest{Name: "walk-token", Value: "ws"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws/wa/templates", client.CreateTemplateRequest{Name: "walk-tpl"})

	var viewer client.OrgMember
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/members", client.AddOrgMemberRequest{Member: "viewer@example.com", Role: "viewer"}).Decode(t, &viewer)
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws/wa/members", client.AddMemberRequest{Member: "viewer@example.com"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/members", client.AddOrgMemberRequest{Member: "member@example.com", Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/ws/wb/members", client.AddMemberRequest{Member: "member@example.com"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-b/members", client.AddOrgMemberRequest{Member: "b-admin@example.com", Role: "admin"})
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/keys", client.CreateKeyRequest{Member: "viewer@example.com"}).Decode(t, &w.viewer)
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/keys", client.CreateKeyRequest{Member: "member@example.com", Role: "member", Workspace: "wb"}).Decode(t, &w.narrowed)
	env.Must(t, 201, "POST", "/api/v1/org/walk-b/keys", client.CreateKeyRequest{Member: "b-admin@example.com", Role: "admin"}).Decode(t, &w.other)
	if w.viewer.Role != "viewer" || w.narrowed.WorkspaceID != w.wb.ID || w.other.OrgID != w.orgB.ID {
		t.Fatalf("keys: viewer %+v, narrowed %+v, org B's %+v", w.viewer.APIKey, w.narrowed.APIKey, w.other.APIKey)
	}
	// A pending invitation to org A, by one of its admins, for someone
	// none of the walk's callers is.
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/members", client.AddOrgMemberRequest{Member: "a-admin@example.com", Role: "admin"})
	var aAdmin client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/walk-a/keys", client.CreateKeyRequest{Member: "a-admin@example.com", Role: "admin"}).Decode(t, &aAdmin)
	var inv client.Invitation
	env.MustKey(t, aAdmin.Key, 202, "POST", "/api/v1/org/walk-a/members", client.AddOrgMemberRequest{Member: "invitee@example.com"}).Decode(t, &inv)

	// Everything the paths name is org A's, in wa.
	w.params = map[string]string{
		"org":         "walk-a",
		"workspace":   "wa",
		"project":     "p1",
		"runtime_id":  p.RuntimeID,
		"sandbox":     rt.CurrentSandboxID,
		"secret":      "walk-token",
		"process_id":  "p-1",
		"binding_id":  binding.ID,
		"port":        "8080",
		"session_id":  uuid.NewString(),
		"task_id":     uuid.NewString(),
		"batch_id":    uuid.NewString(),
		"key_id":      w.viewer.ID,
		"member":      "viewer@example.com",
		"user":        viewer.UserID,
		"name":        "repo-tools",
		"version":     "1.0.0",
		"invitation":  inv.ID,
		"template":    "walk-tpl",
		"snapshot_id": uuid.NewString(),
		"workflow":    "walk-wf",
		"run_id":      uuid.NewString(),
		"build_id":    uuid.NewString(),
		"world_id":    uuid.NewString(),
		"member_name": "a",
		"host":        "no-such-host",
	}
	return w
}

// walkSeen are checks of what a caller let through sees, where it could
// see too much, by case and operation.
func walkSeen(w walkWorld) map[string]func(t *testing.T, b []byte) {
	decode := func(t *testing.T, b []byte, v any) {
		t.Helper()
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
	orgs := func(t *testing.T, b []byte) []string {
		var l client.List[client.Org]
		decode(t, b, &l)
		var names []string
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
		return names
	}
	workspaces := func(t *testing.T, b []byte) []string {
		var l client.List[client.Workspace]
		decode(t, b, &l)
		var names []string
		for _, ws := range l.Items {
			names = append(names, ws.Name)
		}
		return names
	}
	sandboxWorkspaces := func(t *testing.T, b []byte) []string {
		var l client.List[client.Sandbox]
		decode(t, b, &l)
		var ids []string
		for _, sb := range l.Items {
			ids = append(ids, sb.WorkspaceID)
		}
		return ids
	}
	provisions := func(t *testing.T, b []byte) []client.Provision {
		var l client.List[client.Provision]
		decode(t, b, &l)
		return l.Items
	}
	noInvitations := func(t *testing.T, b []byte) {
		var l client.List[client.Invitation]
		decode(t, b, &l)
		if len(l.Items) != 0 {
			t.Errorf("sees invitations for someone else: %+v", l.Items)
		}
	}
	return map[string]func(t *testing.T, b []byte){
		"other_org_admin/listInvitations": noInvitations,
		"narrowed_key/listInvitations":    noInvitations,
		"viewer/listInvitations":          noInvitations,
		"other_org_admin/listOrgs": func(t *testing.T, b []byte) {
			if got := orgs(t, b); !slices.Equal(got, []string{"walk-b"}) {
				t.Errorf("org B's admin lists orgs %v, want [walk-b]", got)
			}
		},
		"other_org_admin/me": func(t *testing.T, b []byte) {
			var me client.Me
			decode(t, b, &me)
			if me.Installation || len(me.Memberships) != 1 || me.Memberships[0].Org != "walk-b" {
				t.Errorf("org B's admin is %+v, want a member of walk-b only", me)
			}
		},
		"other_org_admin/listProvisions": func(t *testing.T, b []byte) {
			for _, pr := range provisions(t, b) {
				if pr.OrgID != w.orgB.ID {
					t.Errorf("org B's admin sees provision %s of org %s (runtime %s)", pr.ID, pr.OrgID, pr.RuntimeID)
				}
			}
		},
		"narrowed_key/listOrgs": func(t *testing.T, b []byte) {
			if got := orgs(t, b); !slices.Equal(got, []string{"walk-a"}) {
				t.Errorf("the narrowed key lists orgs %v, want [walk-a]", got)
			}
		},
		"narrowed_key/listWorkspaces": func(t *testing.T, b []byte) {
			if got := workspaces(t, b); !slices.Equal(got, []string{"wb"}) {
				t.Errorf("the key narrowed to wb lists workspaces %v, want [wb]", got)
			}
		},
		"narrowed_key/listSandboxes": func(t *testing.T, b []byte) {
			for _, ws := range sandboxWorkspaces(t, b) {
				if ws != w.wb.ID {
					t.Errorf("the key narrowed to wb sees a sandbox of workspace %s", ws)
				}
			}
		},
		"narrowed_key/listProvisions": func(t *testing.T, b []byte) {
			for _, pr := range provisions(t, b) {
				if pr.RuntimeID == w.runtimeID {
					t.Errorf("the key narrowed to wb sees provision %s of wa's runtime %s", pr.ID, pr.RuntimeID)
				}
			}
		},
		"viewer/listWorkspaces": func(t *testing.T, b []byte) {
			if got := workspaces(t, b); !slices.Equal(got, []string{"wa"}) {
				t.Errorf("wa's viewer lists workspaces %v, want [wa]", got)
			}
		},
		"viewer/listSandboxes": func(t *testing.T, b []byte) {
			if got := sandboxWorkspaces(t, b); !slices.Equal(got, []string{w.wa.ID}) {
				t.Errorf("wa's viewer sees sandboxes of workspaces %v, want wa's one", got)
			}
		},
	}
}

// TestRouteWalk calls every operation of api/openapi.yaml as five callers
// and holds each answer to the access rules: without credentials, 401;
// as another org's admin, nothing of this org is found (404); with a key
// narrowed to another workspace, nothing of this one is found (404), and
// of the org-wide operations only those marked narrow are allowed (403);
// as a viewer, by its key and by a console session of that key (the
// cookie), everything above viewer is refused (403) and the rest is
// allowed. An operation the walk did not call fails it, so no new route
// escapes.
func TestRouteWalk(t *testing.T) {
	env := servertest.New(t, servertest.Options{Mount: walkFeatures(t)})
	w := newWalkWorld(t, env)
	ops := walkOps(t)
	routes := map[string]api.Route{}
	for _, r := range env.API.Routes() {
		routes[r.Method+" "+r.Pattern] = r
	}
	seen := walkSeen(w)

	cases := walkCases(w)

	called := map[string]bool{}
	for _, op := range ops {
		rt, ok := routes[op.method+" "+op.path]
		if !ok {
			t.Errorf("%s (%s %s) is documented but not routed", op.id, op.method, op.path)
			continue
		}
		t.Run(op.id, func(t *testing.T) {
			if op.role != string(rt.Need) {
				t.Fatalf("x-paddock-role is %q, the route needs %q", op.role, rt.Need)
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					called[op.id] = true
					key, hdr := c.key, []string(nil)
					if c.cookie {
						// A session of its own for each call: the walk
						// signs out too.
						b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: c.key})
						key, hdr = "", []string{"Cookie", "paddock_console=" + b.cookie, api.CSRFHeader, b.csrf, "Origin", env.URL}
					}
					a := walkCall(t, env, op, w.params, key, hdr...)
					if a.status == http.StatusInternalServerError {
						t.Errorf("answered 500: %s", a.body)
					}
					c.check(t, op, rt, a)
					if f, ok := seen[c.name+"/"+op.id]; ok && a.status == http.StatusOK {
						f(t, a.body)
					}
				})
			}
		})
	}
	for _, op := range ops {
		if !called[op.id] {
			t.Errorf("the walk did not call %s (%s %s)", op.id, op.method, op.path)
		}
	}
	// Nobody the walk called as could accept, decline or revoke org A's
	// invitation.
	var pending client.List[client.Invitation]
	env.Must(t, 200, "GET", "/api/v1/org/walk-a/invitations", nil).Decode(t, &pending)
	if len(pending.Items) != 1 || pending.Items[0].ID != w.params["invitation"] || pending.Items[0].State != client.InvitationPending {
		t.Errorf("org A's invitation after the walk: %+v", pending.Items)
	}
	for k := range seen {
		if _, id, _ := strings.Cut(k, "/"); !called[id] {
			t.Errorf("the walk checks what %s sees, but never called it", k)
		}
	}
	for id := range walkBodies {
		if !called[id] {
			t.Errorf("walkBodies has a body for %s, which the walk never called", id)
		}
	}
}

// walkCase is one caller the walk calls every operation as, and what it
// must be answered.
type walkCase struct {
	name, key string
	// cookie: the key's console session, with its cookie, CSRF token and
	// this server's Origin, in place of the key.
	cookie bool
	check  func(t *testing.T, op walkOp, rt api.Route, a walkAnswer)
}

// walkCases are the callers of TestRouteWalk.
func walkCases(w walkWorld) []walkCase {
	// viewerChecks are what a viewer's key gets, and its console session.
	viewerChecks := func(t *testing.T, op walkOp, _ api.Route, a walkAnswer) {
		switch {
		case op.role == "public":
		case op.role == "installation":
			a.is(t, 403, "installation_admin_only")
		case walkRank[op.role] > walkRank["viewer"]:
			a.is(t, 403, "role_too_low")
		default:
			a.through(t)
		}
	}
	return []walkCase{
		{"no_credentials", "", false, func(t *testing.T, op walkOp, _ api.Route, a walkAnswer) {
			if op.role != "public" {
				a.is(t, 401, "missing_api_key")
			}
		}},
		{"other_org_admin", w.other.Key, false, func(t *testing.T, op walkOp, _ api.Route, a walkAnswer) {
			switch {
			case op.role == "public":
			case op.inOrg():
				a.is(t, 404, "org_not_found")
			case op.role == "installation":
				a.is(t, 403, "installation_admin_only")
			default:
				a.through(t)
			}
		}},
		{"narrowed_key", w.narrowed.Key, false, func(t *testing.T, op walkOp, rt api.Route, a walkAnswer) {
			switch {
			case op.role == "public":
			case op.inWorkspace():
				a.is(t, 404, "workspace_not_found")
			case op.inOrg() && !rt.Narrow:
				a.is(t, 403, "key_narrowed_to_workspace")
			case op.role == "installation":
				a.is(t, 403, "installation_admin_only")
			case walkRank[op.role] > walkRank["member"]:
				a.is(t, 403, "role_too_low")
			case strings.Contains(op.path, "{sandbox}"):
				// wa's sandbox, in the org the key reaches.
				a.is(t, 404, "sandbox_not_found")
			default:
				a.through(t)
			}
		}},
		{"viewer", w.viewer.Key, false, viewerChecks},
		{"viewer_console", w.viewer.Key, true, viewerChecks},
	}
}

// TestRouteWalkRateLimited walks every operation from a client address
// that has spent its requests, with no credential and with a refused one:
// all but the meta routes answer 429 rate_limited with Retry-After. The
// address's bucket is for calls without a credential: with a valid key
// the same address still gets answers, and only an operation that needs
// no credential is refused.
func TestRouteWalkRateLimited(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: api.Limits{PerClient: api.Rate{PerSecond: 0.001, Burst: 1}}, Mount: walkFeatures(t)})
	ops := walkOps(t)
	params := map[string]string{
		"org": "walk-a", "workspace": "wa", "project": "p1", "runtime_id": uuid.NewString(),
		"sandbox": uuid.NewString(), "secret": "walk-token", "process_id": "p-1", "binding_id": uuid.NewString(),
		"world_id": uuid.NewString(), "member_name": "a",
		"session_id": uuid.NewString(), "task_id": uuid.NewString(), "batch_id": uuid.NewString(), "snapshot_id": uuid.NewString(), "build_id": uuid.NewString(), "host": "no-such-host", "key_id": uuid.NewString(), "member": "viewer@example.com", "port": "8080",
		"user": uuid.NewString(), "name": "repo-tools", "version": "1.0.0", "invitation": uuid.NewString(),
		"template": "walk-tpl", "workflow": "walk-wf", "run_id": uuid.NewString(),
	}
	// The one request the address may make without a credential.
	env.MustKey(t, "", 401, "GET", "/api/v1/orgs", nil)
	refused := auth.KeyPrefix + strings.Repeat("0", 48)
	for _, op := range ops {
		t.Run(op.id, func(t *testing.T) {
			for _, key := range []string{"", refused} {
				a := walkCall(t, env, op, params, key)
				if op.meta() {
					if a.status == http.StatusTooManyRequests {
						t.Errorf("a meta route answered 429: %s", a.body)
					}
					continue
				}
				a.is(t, 429, "rate_limited")
				if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s < 1 {
					t.Errorf("Retry-After is %q, want whole seconds", a.header.Get("Retry-After"))
				}
			}
			if a := walkCall(t, env, op, params, env.Key); (a.status == http.StatusTooManyRequests) != (op.role == "public" && !op.meta()) {
				t.Errorf("with a valid key from the spent address: %d %s", a.status, a.body)
			}
		})
	}
}

// walkFeatures are the features a servertest.Env does not mount by
// itself (metrics, an SSH gateway's info), so that the walk's API has
// every feature mounted.
func walkFeatures(t *testing.T) []api.Feature {
	t.Helper()
	key, err := sshgw.LoadHostKey(filepath.Join(t.TempDir(), sshgw.HostKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return []api.Feature{api.Metrics(metrics.New()), api.SSH(sshgw.NewInfo("127.0.0.1:2222", key.PublicKey())), walkInstance.feature()}
}

// walkInstanceMode is the walk's instance mode: its runtime is wa's, once
// newWalkWorld has made it.
type walkInstanceMode struct{ target atomic.Pointer[api.Sandbox] }

var walkInstance walkInstanceMode

// feature is instance mode on the runtime the walk sets.
func (m *walkInstanceMode) feature() api.Feature {
	return api.Instance(func() (api.Sandbox, bool) {
		if s := m.target.Load(); s != nil {
			return *s, true
		}
		// Before a world: a runtime of an org that does not exist.
		return api.Sandbox{Org: "walk-none", Workspace: "none", Runtime: "00000000-0000-4000-8000-000000000000"}, true
	})
}
