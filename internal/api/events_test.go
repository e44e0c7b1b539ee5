package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// sseEvent is one server-sent event, or a comment (name "").
type sseEvent struct {
	id, name, data, comment string
}

// sseStream is an open GET /api/v1/events, read by a goroutine of its own.
type sseStream struct {
	t      *testing.T
	in     chan sseEvent
	ended  chan struct{}
	cancel context.CancelFunc
}

// streamTimeout bounds a wait for an event the test caused: generous, so
// that only a broken stream ever reaches it.
const streamTimeout = 30 * time.Second

// openEvents opens the event stream of url as key, with query; it must
// answer 200.
func openEvents(t *testing.T, url, key, query string) *sseStream {
	t.Helper()
	resp, cancel := getEvents(t, url, key, query)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("GET /api/v1/events%s = %d %s", query, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{t: t, in: make(chan sseEvent, 4096), ended: make(chan struct{}), cancel: cancel}
	t.Cleanup(cancel)
	go s.read(resp)
	// The opening comment: the server has opened the stream on its hub.
	if c := s.next(func(e sseEvent) bool { return e.comment != "" }); c.comment != "paddock events" {
		t.Fatalf("the stream opens with %+v", c)
	}
	return s
}

// getEvents sends GET /api/v1/events as key ("" none).
func getEvents(t *testing.T, url, key, query string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return resp, func() { cancel(); resp.Body.Close() }
}

func (s *sseStream) read(resp *http.Response) {
	defer close(s.ended)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var e sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e != (sseEvent{}) {
				s.in <- e
			}
			e = sseEvent{}
		case strings.HasPrefix(line, ":"):
			e.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			e.data = line[6:]
		}
	}
}

// next returns the first event match takes, failing the test when the
// stream ends or none comes in time. Every event before it is handed to
// saw, if given.
func (s *sseStream) next(match func(sseEvent) bool, saw ...func(sseEvent)) sseEvent {
	s.t.Helper()
	deadline := time.After(streamTimeout)
	for {
		select {
		case e := <-s.in:
			if match(e) {
				return e
			}
			for _, f := range saw {
				f(e)
			}
		case <-s.ended:
			s.t.Fatal("the event stream ended")
		case <-deadline:
			s.t.Fatal("no such event came")
		}
	}
}

// waitEnded fails the test unless the stream ends in time.
func (s *sseStream) waitEnded() {
	s.t.Helper()
	for {
		select {
		case <-s.in:
		case <-s.ended:
			return
		case <-time.After(streamTimeout):
			s.t.Fatal("the event stream did not end")
		}
	}
}

// runtimeEvent decodes an `event: runtime`.
func runtimeEvent(t *testing.T, e sseEvent) client.RuntimeEvent {
	t.Helper()
	var v client.RuntimeEvent
	if err := json.Unmarshal([]byte(e.data), &v); err != nil {
		t.Fatalf("decode %q: %v", e.data, err)
	}
	return v
}

// isRuntime matches the runtime event of kind about runtime id.
func isRuntime(t *testing.T, id, kind string) func(sseEvent) bool {
	return func(e sseEvent) bool {
		if e.name != "runtime" {
			return false
		}
		v := runtimeEvent(t, e)
		return v.Runtime.ID == id && v.Kind == kind
	}
}

// never fails t when an event names any of ids, in its data.
func never(t *testing.T, who string, ids ...string) func(sseEvent) {
	return func(e sseEvent) {
		for _, id := range ids {
			if strings.Contains(e.data, id) {
				t.Errorf("%s got an event naming %s: %s %s", who, id, e.name, e.data)
			}
		}
	}
}

// eventsWorld: org acme with workspaces dev and ops, a runtime in each;
// org other with a runtime; an admin of each org, a viewer of acme's dev,
// and a key narrowed to ops.
type eventsWorld struct {
	acme, other                 client.Org
	dev, ops                    client.Workspace
	devRT, opsRT, otherRT       string
	admin, viewer, narrowed, ob client.CreatedKey
}

func newEventsWorld(t *testing.T, env *servertest.Env) eventsWorld {
	t.Helper()
	var w eventsWorld
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"}).Decode(t, &w.acme)
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"}).Decode(t, &w.other)
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"}).Decode(t, &w.dev)
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "ops"}).Decode(t, &w.ops)
	env.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})
	project := func(org, ws, name string) string {
		var p client.Project
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/ws/"+ws+"/projects", client.CreateProjectRequest{Name: name}).Decode(t, &p)
		return p.RuntimeID
	}
	w.devRT, w.opsRT, w.otherRT = project("acme", "dev", "api"), project("acme", "ops", "db"), project("other", "dev", "secret-project")
	member := func(org, email, role string) {
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/members", client.AddOrgMemberRequest{Member: email, Role: role})
	}
	member("acme", "admin@acme.test", "admin")
	member("acme", "viewer@acme.test", "viewer")
	member("acme", "ops@acme.test", "member")
	member("other", "admin@other.test", "admin")
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "viewer@acme.test"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/ops/members", client.AddMemberRequest{Member: "ops@acme.test"})
	key := func(org string, req client.CreateKeyRequest, k *client.CreatedKey) {
		env.Must(t, 201, "POST", "/api/v1/org/"+org+"/keys", req).Decode(t, k)
	}
	key("acme", client.CreateKeyRequest{Member: "admin@acme.test", Role: "admin"}, &w.admin)
	key("acme", client.CreateKeyRequest{Member: "viewer@acme.test"}, &w.viewer)
	key("acme", client.CreateKeyRequest{Member: "ops@acme.test", Role: "member", Workspace: "ops"}, &w.narrowed)
	key("other", client.CreateKeyRequest{Member: "admin@other.test", Role: "admin"}, &w.ob)
	return w
}

func rtPath(org, ws, id string) string { return "/api/v1/org/" + org + "/ws/" + ws + "/runtimes/" + id }

// TestEventsNeverLeak: each stream carries the transitions of what its
// caller may see and nothing of the rest, not even an id: acme's admin
// sees both of acme's workspaces and nothing of org other; acme's viewer
// sees dev's; the key narrowed to ops only ops; org other's admin only
// its own; the installation admin everything.
func TestEventsNeverLeak(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	w := newEventsWorld(t, env)
	admin := openEvents(t, env.URL, w.admin.Key, "")
	viewer := openEvents(t, env.URL, w.viewer.Key, "")
	narrowed := openEvents(t, env.URL, w.narrowed.Key, "")
	other := openEvents(t, env.URL, w.ob.Key, "")
	installation := openEvents(t, env.URL, env.Key, "")

	env.Must(t, 200, "POST", rtPath("other", "dev", w.otherRT)+"/start", nil)
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/start", nil)
	// Last, so that every stream has had the others' events before it.
	env.Must(t, 200, "POST", rtPath("other", "dev", w.otherRT)+"/pause", nil)

	e := runtimeEvent(t, admin.next(isRuntime(t, w.devRT, "running"), never(t, "acme's admin", w.otherRT, w.other.ID)))
	if e.Org != "acme" || e.Workspace != "dev" || e.Runtime.Status != "running" || e.Runtime.ProjectName != "api" || e.Runtime.ExpiresAt == nil {
		t.Errorf("acme's admin sees %+v", e)
	}
	admin.next(isRuntime(t, w.opsRT, "running"), never(t, "acme's admin", w.otherRT, w.other.ID))

	viewer.next(isRuntime(t, w.devRT, "running"), never(t, "dev's viewer", w.otherRT, w.other.ID, w.opsRT, w.ops.ID))
	narrowed.next(isRuntime(t, w.opsRT, "running"), never(t, "the key narrowed to ops", w.otherRT, w.other.ID, w.devRT, w.dev.ID))
	other.next(isRuntime(t, w.otherRT, "running"))
	other.next(isRuntime(t, w.otherRT, "paused"), never(t, "org other's admin", w.devRT, w.opsRT, w.acme.ID))

	for _, id := range []string{w.otherRT, w.devRT, w.opsRT} {
		installation.next(isRuntime(t, id, "running"))
	}
	// The viewer and the narrowed key hear nothing more of the others:
	// their next events are their own runtime's pause.
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/pause", nil)
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/pause", nil)
	viewer.next(isRuntime(t, w.devRT, "paused"), never(t, "dev's viewer", w.otherRT, w.opsRT))
	narrowed.next(isRuntime(t, w.opsRT, "paused"), never(t, "the key narrowed to ops", w.otherRT, w.devRT))
}

// TestEventsNarrowed: ?org= and ?workspace= narrow a stream, asked of the
// access service as a path: one the caller may not see is not found, a
// workspace without its org is a bad request, no credentials 401.
func TestEventsNarrowed(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	w := newEventsWorld(t, env)
	for _, c := range []struct {
		key, query string
		status     int
		code       string
	}{
		{"", "", 401, "missing_api_key"},
		{"pdk_" + strings.Repeat("0", 48), "", 401, "invalid_api_key"},
		{w.admin.Key, "?workspace=dev", 400, "workspace_without_org"},
		{w.ob.Key, "?org=acme", 404, "org_not_found"},
		{w.admin.Key, "?org=nope", 404, "org_not_found"},
		{w.viewer.Key, "?org=acme&workspace=ops", 404, "workspace_not_found"},
		{w.narrowed.Key, "?org=acme&workspace=dev", 404, "workspace_not_found"},
	} {
		resp, cancel := getEvents(t, env.URL, c.key, c.query)
		var e client.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		cancel()
		if resp.StatusCode != c.status || e.Code != c.code {
			t.Errorf("GET /api/v1/events%s = %d %s, want %d %s", c.query, resp.StatusCode, e.Code, c.status, c.code)
		}
	}
	dev := openEvents(t, env.URL, w.admin.Key, "?org=acme&workspace=dev")
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/start", nil)
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	dev.next(isRuntime(t, w.devRT, "running"), never(t, "the stream narrowed to dev", w.opsRT))
	narrowed := openEvents(t, env.URL, w.narrowed.Key, "?org=acme")
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/pause", nil)
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/pause", nil)
	narrowed.next(isRuntime(t, w.opsRT, "paused"), never(t, "the key narrowed to ops", w.devRT))
}

// TestEventsKinds: a runtime's life on the stream, each event with the
// runtime as GET answers it: created, starting, running, updated by a
// keepalive (its expiry) and by a configuration change, paused by the
// user, killed by a reset, deleted.
func TestEventsKinds(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	s := openEvents(t, env.URL, env.Key, "?org=acme")
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	path := rtPath("acme", "dev", p.RuntimeID)
	s.next(isRuntime(t, p.RuntimeID, "created"))
	env.Must(t, 200, "POST", path+"/start", nil)
	s.next(isRuntime(t, p.RuntimeID, "starting"))
	running := runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "running")))

	kept := runtimeOf(t, env.Must(t, 200, "POST", path+"/keepalive", map[string]any{"duration_seconds": 7200}))
	e := runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "updated")))
	if e.Runtime.ExpiresAt == nil || kept.ExpiresAt == nil || !e.Runtime.ExpiresAt.Equal(*kept.ExpiresAt) || !e.Runtime.ExpiresAt.After(*running.Runtime.ExpiresAt) {
		t.Errorf("after a keepalive the stream says expiry %v, GET %v (it was %v)", e.Runtime.ExpiresAt, kept.ExpiresAt, running.Runtime.ExpiresAt)
	}
	env.Must(t, 200, "PATCH", path, map[string]any{"idle_timeout_seconds": 600})
	e = runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "updated")))
	if e.Runtime.Config.IdleTimeoutSeconds != 600 {
		t.Errorf("after a configuration change the stream says %+v", e.Runtime.Config)
	}
	env.Must(t, 200, "POST", path+"/pause", nil)
	if e := runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "paused"))); e.Reason != "user" || e.Runtime.PauseReason != "user" {
		t.Errorf("a pause says reason %q, pause reason %q", e.Reason, e.Runtime.PauseReason)
	}
	env.Must(t, 200, "POST", path+"/reset", nil)
	if e := runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "killed"))); e.Reason != "reset" {
		t.Errorf("a reset's kill says reason %q", e.Reason)
	}
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	if e := runtimeEvent(t, s.next(isRuntime(t, p.RuntimeID, "deleted"))); e.Org != "acme" || e.Workspace != "dev" {
		t.Errorf("the deletion says %+v", e)
	}
	// Every event has an id, one more than the one before on the server.
	s2 := openEvents(t, env.URL, env.Key, "")
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p2"}).Decode(t, &p)
	if e := s2.next(func(e sseEvent) bool { return e.name == "runtime" }); e.id == "" {
		t.Errorf("an event without an id: %+v", e)
	}
}

// TestEventsEgressAndProvisions: an egress decision reaches only the
// streams of its runtime's org and workspace; provisions only the
// installation admin's.
func TestEventsEgressAndProvisions(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	w := newEventsWorld(t, env)
	admin := openEvents(t, env.URL, w.admin.Key, "")
	viewer := openEvents(t, env.URL, w.viewer.Key, "")
	other := openEvents(t, env.URL, w.ob.Key, "")
	installation := openEvents(t, env.URL, env.Key, "")

	decision := func(org client.Org, ws client.Workspace, runtimeID, host string) store.EgressDecision {
		return store.EgressDecision{ID: uuid.NewString(), OrgID: org.ID, WorkspaceID: ws.ID, RuntimeID: runtimeID, SandboxID: uuid.NewString(),
			At: time.Now(), Allowed: false, Reason: "no allow rule matches", Refusal: "not_allowed", Method: "CONNECT", Host: host, Port: 443}
	}
	var otherWS client.Workspace
	env.Must(t, 200, "GET", "/api/v1/org/other/ws/dev", nil).Decode(t, &otherWS)
	env.Events.Egress(decision(w.other, otherWS, w.otherRT, "other.example"))
	env.Events.Egress(decision(w.acme, w.ops, w.opsRT, "ops.example"))
	env.Events.Egress(decision(w.acme, w.dev, w.devRT, "dev.example"))

	isEgress := func(host string) func(sseEvent) bool {
		return func(e sseEvent) bool { return e.name == "egress" && strings.Contains(e.data, host) }
	}
	var got client.EgressEvent
	if err := json.Unmarshal([]byte(admin.next(isEgress("ops.example"), never(t, "acme's admin", "other.example", w.otherRT)).data), &got); err != nil {
		t.Fatal(err)
	}
	if got.Org != "acme" || got.Workspace != "ops" || got.RuntimeID != w.opsRT || got.Host != "ops.example" || got.Allowed {
		t.Errorf("acme's admin sees %+v", got)
	}
	viewer.next(isEgress("dev.example"), never(t, "dev's viewer", "other.example", "ops.example"))
	other.next(isEgress("other.example"))
	installation.next(isEgress("dev.example"))

	// A start: the installation admin sees its provision; acme's admin
	// sees its transitions and no provision.
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	noProvision := func(e sseEvent) {
		if e.name == "provision" {
			t.Errorf("acme's admin got a provision: %s", e.data)
		}
	}
	admin.next(isRuntime(t, w.devRT, "running"), noProvision)
	var pr client.Provision
	for pr.State != "succeeded" {
		e := installation.next(func(e sseEvent) bool { return e.name == "provision" })
		if err := json.Unmarshal([]byte(e.data), &pr); err != nil {
			t.Fatal(err)
		}
		if pr.RuntimeID != w.devRT || pr.OrgID != w.acme.ID {
			t.Fatalf("the provision is %+v", pr)
		}
	}
	// Its next one too, after the running event it came before.
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/pause", nil)
	admin.next(isRuntime(t, w.devRT, "paused"), noProvision)
}

// TestEventsEndWithTheCredential: a stream ends when its key is revoked:
// at once through this server, and when it is revoked elsewhere (another
// replica, straight in the store) by the heartbeat's check of the key.
// Heartbeats come at the configured interval.
func TestEventsEndWithTheCredential(t *testing.T) {
	env := servertest.New(t, servertest.Options{EventHeartbeat: 20 * time.Millisecond})
	w := newEventsWorld(t, env)
	s := openEvents(t, env.URL, w.admin.Key, "")
	s.next(func(e sseEvent) bool { return e.comment == "heartbeat" })
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+w.admin.ID, nil)
	s.waitEnded()

	s = openEvents(t, env.URL, w.viewer.Key, "")
	if _, err := env.Store.RevokeAPIKey(t.Context(), w.viewer.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	s.waitEnded()
	resp, cancel := getEvents(t, env.URL, w.viewer.Key, "")
	cancel()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked key's new stream = %d", resp.StatusCode)
	}
}

// TestEventsAcrossReplicas: two servers on one PostgreSQL database. What
// happens through A (transitions, an egress decision of A's proxy, a
// deletion) reaches the streams on B, read from the rows there, to those
// who may see it only; A's own streams hear each event once.
func TestEventsAcrossReplicas(t *testing.T) {
	dsn := testenv.Postgres(t)
	prov := fake.New(fake.Config{})
	const instance = "test-events-replicas"
	a := servertest.New(t, servertest.Options{Provider: prov, Instance: instance, Store: dsn})
	b := servertest.New(t, servertest.Options{Provider: prov, Instance: instance, Store: dsn})
	w := newEventsWorld(t, a)
	onB := openEvents(t, b.URL, w.admin.Key, "")
	otherOnB := openEvents(t, b.URL, w.ob.Key, "")
	onA := openEvents(t, a.URL, w.admin.Key, "")

	a.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	a.Must(t, 200, "POST", rtPath("other", "dev", w.otherRT)+"/start", nil)
	e := runtimeEvent(t, onB.next(isRuntime(t, w.devRT, "running"), never(t, "acme's admin on B", w.otherRT)))
	if e.Org != "acme" || e.Workspace != "dev" || e.Runtime.Status != "running" || e.Runtime.ExpiresAt == nil || e.Runtime.ProjectName != "api" {
		t.Errorf("B's stream says %+v", e)
	}
	otherOnB.next(isRuntime(t, w.otherRT, "running"), never(t, "org other's admin on B", w.devRT, w.acme.ID))

	a.Events.Egress(store.EgressDecision{ID: uuid.NewString(), OrgID: w.acme.ID, WorkspaceID: w.dev.ID, RuntimeID: w.devRT,
		SandboxID: e.Runtime.CurrentSandboxID, At: time.Now(), Allowed: true, Reason: "allowed by rule pypi.org",
		Method: "CONNECT", Host: "pypi.org", Port: 443, BytesUp: 10, BytesDown: 20})
	var eg client.EgressEvent
	if err := json.Unmarshal([]byte(onB.next(func(e sseEvent) bool { return e.name == "egress" }).data), &eg); err != nil {
		t.Fatal(err)
	}
	if eg.Org != "acme" || eg.Workspace != "dev" || eg.RuntimeID != w.devRT || eg.Host != "pypi.org" || !eg.Allowed || eg.BytesDown != 20 {
		t.Errorf("B's stream says of A's egress %+v", eg)
	}

	a.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/reset", nil)
	a.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/api", nil)
	if e := runtimeEvent(t, onB.next(isRuntime(t, w.devRT, "deleted"))); e.Org != "acme" || e.Workspace != "dev" || e.Runtime.ID != w.devRT {
		t.Errorf("B's stream says of the deletion %+v", e)
	}
	a.Must(t, 200, "POST", rtPath("other", "dev", w.otherRT)+"/pause", nil)
	otherOnB.next(isRuntime(t, w.otherRT, "paused"), never(t, "org other's admin on B", w.devRT, "pypi.org"))

	running := 0
	onA.next(isRuntime(t, w.devRT, "deleted"), func(e sseEvent) {
		if isRuntime(t, w.devRT, "running")(e) {
			running++
		}
	})
	if running != 1 {
		t.Errorf("A's own stream heard its runtime run %d times, want once", running)
	}
}

// TestEventsFollowMemberships: a stream follows its caller's memberships
// as they change, once the decisions it keeps (2s, on the API's clock)
// have lapsed: a viewer moved from dev to ops hears ops and no more of
// dev; removed from the org, its key dies with the membership and the
// stream ends.
func TestEventsFollowMemberships(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	env := servertest.New(t, servertest.Options{Now: now})
	w := newEventsWorld(t, env)
	viewer := openEvents(t, env.URL, w.viewer.Key, "")
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	viewer.next(isRuntime(t, w.devRT, "running"))

	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/ops/members", client.AddMemberRequest{Member: "viewer@acme.test"})
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/members/viewer@acme.test", nil)
	offset.Add(int64(3 * time.Second))
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/pause", nil)
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/start", nil)
	viewer.next(isRuntime(t, w.opsRT, "running"), never(t, "the viewer who left dev", w.devRT))

	env.Must(t, 204, "DELETE", "/api/v1/org/acme/members/viewer@acme.test", nil)
	viewer.waitEnded()
}

// TestEventsOfASession: a wallet session's stream carries what its
// user's memberships let it see (a viewer of acme's dev: dev, not ops,
// nothing of org other), and signing out ends it.
func TestEventsOfASession(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	w := newEventsWorld(t, env)
	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "viewer"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: addr})
	var c client.AuthChallenge
	env.Must(t, 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &c)
	var sess client.AuthSession
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: c.Nonce, Signature: sign(c.Message)}).Decode(t, &sess)

	s := openEvents(t, env.URL, sess.Token, "")
	env.Must(t, 200, "POST", rtPath("other", "dev", w.otherRT)+"/start", nil)
	env.Must(t, 200, "POST", rtPath("acme", "ops", w.opsRT)+"/start", nil)
	env.Must(t, 200, "POST", rtPath("acme", "dev", w.devRT)+"/start", nil)
	s.next(isRuntime(t, w.devRT, "running"), never(t, "dev's viewer by wallet", w.otherRT, w.opsRT, w.other.ID))
	env.MustKey(t, sess.Token, 204, "DELETE", "/api/auth/session", nil)
	s.waitEnded()
}
