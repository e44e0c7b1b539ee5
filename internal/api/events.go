package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/fleetevents"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// DefaultHeartbeat is how often an event stream says it is alive.
const DefaultHeartbeat = 15 * time.Second

// decisionTTL is how long a stream keeps what the access service said of
// its credential and of each workspace before asking again: a revoked
// key, a member removed or a role lowered takes effect within it.
const decisionTTL = 2 * time.Second

// eventsFeature is the event stream's hub and heartbeat.
type eventsFeature struct {
	hub       *fleetevents.Hub
	heartbeat time.Duration
}

// Events serves the fleet's live events (GET /api/v1/events) from hub,
// with a heartbeat every heartbeat (0: DefaultHeartbeat).
func Events(hub *fleetevents.Hub, heartbeat time.Duration) Feature {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	return Feature{Name: "events", use: func(a *API) { a.events = &eventsFeature{hub: hub, heartbeat: heartbeat} },
		routes: func(a *API) []Route {
			return []Route{route("GET", "/api/v1/events", anyone, a.streamEvents)}
		}}
}

// streamEvents streams the events the caller may see as server-sent
// events, until the client goes, the credential is refused, or the hub
// ends the stream (see the route's description in api/openapi.yaml).
func (a *API) streamEvents(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	es, err := a.eventScopeOf(r, id)
	if err != nil {
		return err
	}
	liveOrg := es.orgID
	if liveOrg == "" {
		liveOrg = id.OrgID
	}
	ctx, end := a.live.open(r.Context(), id, liveOrg)
	defer end()
	s := a.events.hub.Open()
	defer s.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(text string) bool {
		if _, err := fmt.Fprint(w, text); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(": paddock events\n\n") {
		return nil
	}
	tick := time.NewTicker(a.events.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.Ended():
			return nil
		case <-tick.C:
			if !es.credentialHolds(ctx) || !send(": heartbeat\n\n") {
				return nil
			}
		case e := <-s.Events():
			name, data, ok := es.render(ctx, e)
			if es.refused {
				return nil
			}
			if ok && !send(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, name, data)) {
				return nil
			}
		}
	}
}

// eventScope is what one stream may see: asked of the access service for
// each event, its answers kept for decisionTTL.
type eventScope struct {
	a *API
	// cred names the stream's credential; p is what it carries, as of
	// checked.
	cred    string
	p       auth.Identity
	checked time.Time
	// refused: the credential no longer holds; the stream ends.
	refused bool
	// orgID and wsID narrow the stream (?org=, ?workspace=); "" does not.
	orgID, wsID string
	seen        map[[2]string]seenScope
}

// seenScope is a decision about one org's workspace.
type seenScope struct {
	ok      bool
	org, ws string // names
	decided time.Time
}

// eventScopeOf reads the stream's ?org= and ?workspace=, each asked of
// the access service as a path's are: one the caller may not see is not
// found.
func (a *API) eventScopeOf(r *http.Request, id auth.Identity) (*eventScope, error) {
	es := &eventScope{a: a, cred: id.Credential(), p: id, checked: a.now(), seen: map[[2]string]seenScope{}}
	q := r.URL.Query()
	org, ws := q.Get("org"), q.Get("workspace")
	if org == "" && ws != "" {
		return nil, errdefs.InvalidArgument("workspace_without_org", "?workspace= narrows an org: give ?org= too")
	}
	if org == "" {
		return es, nil
	}
	sc, err := a.iam.Authorize(r.Context(), id, viewer, iam.Target{Org: org, Workspace: ws, Narrow: true, Action: "GET /api/v1/events"})
	if err != nil {
		return nil, err
	}
	es.orgID, es.wsID = sc.Access.Org.ID, sc.Workspace.ID
	return es, nil
}

// credentialHolds asks again, at most every decisionTTL, what the
// stream's credential carries; a refusal ends the stream. A store that
// cannot answer leaves the last answer standing.
func (es *eventScope) credentialHolds(ctx context.Context) bool {
	if es.refused {
		return false
	}
	if es.a.now().Sub(es.checked) < decisionTTL {
		return true
	}
	p, err := es.a.iam.Reverify(ctx, es.cred)
	switch {
	case errors.Is(err, errdefs.ErrUnauthenticated):
		es.refused = true
		return false
	case err != nil:
		return true
	}
	if p != es.p {
		clear(es.seen) // a role lowered, a membership gone: decide again
	}
	es.p, es.checked = p, es.a.now()
	return true
}

// sees says whether the stream may see the runtime id of org's workspace
// ws, and their names: the access service decides it (viewer or more).
func (es *eventScope) sees(ctx context.Context, orgID, wsID, runtimeID string) (seenScope, bool) {
	if (es.orgID != "" && orgID != es.orgID) || (es.wsID != "" && wsID != es.wsID) || runtimeID == "" {
		return seenScope{}, false
	}
	if !es.credentialHolds(ctx) {
		return seenScope{}, false
	}
	key := [2]string{orgID, wsID}
	if d, ok := es.seen[key]; ok && es.a.now().Sub(d.decided) < decisionTTL {
		return d, d.ok
	}
	d := seenScope{decided: es.a.now()}
	sc, err := es.a.iam.Authorize(ctx, es.p, viewer, iam.RuntimeTarget(store.Runtime{ID: runtimeID, OrgID: orgID, WorkspaceID: wsID}))
	if err == nil {
		d.ok, d.org = true, sc.Access.Org.Name
		d.ws = es.a.tenancy.Names().UsageKey(ctx, store.UsageByWorkspace, wsID)
	} else if !errdefs.IsNotFound(err) && !errors.Is(err, errdefs.ErrPermissionDenied) {
		return seenScope{}, false // not kept: asked again next time
	}
	es.seen[key] = d
	return d, d.ok
}

// render is e as the stream sends it: its event name and data, when the
// stream may see it.
func (es *eventScope) render(ctx context.Context, e fleetevents.Event) (name string, data []byte, ok bool) {
	var v any
	switch {
	case e.Runtime != nil:
		rt := e.Runtime.Runtime
		d, ok := es.sees(ctx, rt.OrgID, rt.WorkspaceID, rt.ID)
		if !ok {
			return "", nil, false
		}
		var sb *store.Sandbox
		if e.Runtime.Sandbox.ID != "" {
			sb = &e.Runtime.Sandbox
		}
		out := runtimeOut(rt, sb, es.a.pricing())
		out.ProjectName = es.a.tenancy.Names().Project(ctx, rt.ProjectID)
		name, v = "runtime", client.RuntimeEvent{Kind: string(e.Runtime.Kind), Org: d.org, Workspace: d.ws,
			Runtime: out, Reason: eventReason(*e.Runtime), At: e.Runtime.At.UTC()}
	case e.Egress != nil:
		x := e.Egress
		d, ok := es.sees(ctx, x.OrgID, x.WorkspaceID, x.RuntimeID)
		if !ok {
			return "", nil, false
		}
		name, v = "egress", client.EgressEvent{EgressDecision: egressOut(*x), Org: d.org, Workspace: d.ws}
	case e.Provision != nil:
		if (es.orgID != "" && e.Provision.OrgID != es.orgID) || !es.credentialHolds(ctx) || !es.p.Installation {
			return "", nil, false
		}
		name, v = "provision", provisionOut(*e.Provision, time.Now())
	default:
		return "", nil, false
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "", nil, false
	}
	return name, data, true
}

// eventReason is why a runtime moved: a kill's reason, a pause's, or the
// status reason of a start that failed.
func eventReason(e runtime.Event) string {
	switch {
	case e.Reason != "" && e.Kind != runtime.EventFailed:
		return e.Reason
	case e.Kind == runtime.EventPaused:
		return string(e.Sandbox.PauseReason)
	case e.Kind == runtime.EventFailed:
		return e.Runtime.StatusReason
	}
	return ""
}
