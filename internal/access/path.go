package access

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Agents wakes runtimes and dials their agents: runtime.Service.
type Agents interface {
	// AgentOf returns rt's agent, waking rt when it is paused or
	// archived; rt counts as active until ctx ends.
	AgentOf(ctx context.Context, rt store.Runtime) (*agentconn.Client, store.Runtime, error)
}

// Path is the one way from a door (the preview gateway, the SSH gateway,
// and the console and E2B-compatible surface to come) to a runtime's
// agent: Resolve the runtime the door names, Authorize the principal on
// it, Wake it, Dial its agent. Each door adds only its own transport.
type Path struct {
	Access *Service
	Agents Agents
}

// MinShortID is the fewest hex characters of a runtime's id that name it:
// a preview host's, an SSH user name's.
const MinShortID = 12

// ShortID is how a preview host and an SSH user name name a runtime: the
// first MinShortID hex digits of its id.
func ShortID(runtimeID string) string {
	s := strings.ReplaceAll(runtimeID, "-", "")
	return s[:min(len(s), MinShortID)]
}

// RuntimePrefix turns a name into the runtime id, or id prefix, it means:
// a whole UUID as it is (lowercased), or MinShortID to 32 hex characters
// with the UUID's dashes put back. ok is false for anything else.
func RuntimePrefix(name string) (prefix string, ok bool) {
	name = strings.ToLower(name)
	if len(name) == 36 {
		if _, err := uuid.Parse(name); err != nil {
			return "", false
		}
		return name, true
	}
	if len(name) < MinShortID || len(name) > 32 {
		return "", false
	}
	var b strings.Builder
	for i, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b.WriteByte('-')
		}
		b.WriteRune(c)
	}
	return b.String(), true
}

// notFound is ErrRuntimeNotFound with why, for the door's log.
func notFound(why string) error {
	return ErrRuntimeNotFound.WithCause(&auth.Refusal{Reason: why})
}

// Resolve finds the runtime name means: its id, or a short id
// (RuntimePrefix) that must match exactly one runtime. It does not say
// whether the caller may see it: anything not found is
// ErrRuntimeNotFound, with an auth.Refusal naming why.
func (p Path) Resolve(ctx context.Context, name string) (store.Runtime, error) {
	prefix, ok := RuntimePrefix(name)
	if !ok {
		return store.Runtime{}, notFound("malformed_runtime_name")
	}
	if len(prefix) == 36 {
		rt, err := p.Access.store.GetRuntime(ctx, prefix)
		if errdefs.IsNotFound(err) {
			return rt, notFound("unknown_runtime")
		}
		return rt, err
	}
	rts, err := p.Access.store.FindRuntimesByIDPrefix(ctx, prefix, 2)
	switch {
	case err != nil:
		return store.Runtime{}, err
	case len(rts) == 0:
		return store.Runtime{}, notFound("unknown_runtime")
	case len(rts) > 1:
		return store.Runtime{}, notFound("ambiguous_runtime")
	}
	return rts[0], nil
}

// Authorize decides whether pr may do what needs need in rt (the zero
// runtime for one that does not exist): Service.Authorize on the runtime.
func (p Path) Authorize(ctx context.Context, pr Principal, need Need, rt store.Runtime) error {
	_, err := p.Access.Authorize(ctx, pr, need, RuntimeTarget(rt))
	return err
}

// Wake wakes rt when it is not running, within bound.
func (p Path) Wake(ctx context.Context, rt store.Runtime, bound time.Duration) error {
	if rt.Status == store.RuntimeRunning {
		return nil
	}
	wake, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	_, _, err := p.Agents.AgentOf(wake, rt)
	if err == nil {
		return nil
	}
	if wake.Err() != nil && ctx.Err() == nil {
		err = errdefs.Unavailable("wake_failed", "the runtime did not wake within %s", bound).WithCause(err)
	}
	return WakeFailed(err)
}

// Dial returns rt's agent, waking rt if need be; the agent is held, and
// rt counts as active, until ctx ends.
func (p Path) Dial(ctx context.Context, rt store.Runtime) (*agentconn.Client, error) {
	agent, _, err := p.Agents.AgentOf(ctx, rt)
	return agent, err
}

// WakeFailed says a runtime could not be woken, keeping the reason's code
// when it has one.
func WakeFailed(err error) error {
	if _, ok := errdefs.Public(err); ok {
		return err
	}
	return errdefs.Unavailable("wake_failed", "the runtime could not be woken").WithCause(err)
}

// ResolveIn finds runtime id in workspace ws of org (names, as a path URL
// gives them), not yet checking who may see it. It asks the store the
// same three questions whether or not the runtime exists, so that an
// unknown runtime does not answer sooner than another org's; anything not
// found is ErrRuntimeNotFound.
func (p Path) ResolveIn(ctx context.Context, org, ws, id string) (store.Runtime, error) {
	if !store.IsID(id) || !tenancy.NameRE.MatchString(org) || !tenancy.NameRE.MatchString(ws) {
		return store.Runtime{}, notFound("malformed_runtime_name")
	}
	st := p.Access.store
	o, err := st.GetOrgByName(ctx, org)
	if err != nil && !errdefs.IsNotFound(err) {
		return store.Runtime{}, err
	}
	// An org that does not exist is looked in all the same, by an id
	// that matches nothing, and so is a workspace.
	w, err := st.GetWorkspaceByName(ctx, o.ID, ws)
	if err != nil && !errdefs.IsNotFound(err) {
		return store.Runtime{}, err
	}
	rt, found, err := p.lookup(ctx, w.ID, id)
	switch {
	case err != nil:
		return store.Runtime{}, err
	case !found || o.ID == "":
		return store.Runtime{}, notFound("unknown_runtime")
	}
	return rt, nil
}

// InWorkspace finds runtime id in workspace workspaceID, one the caller
// is already authorized in: the API's runtime routes, whose guard
// authorized the caller in the path's org and workspace (Authorize) before
// the runtime is looked up, so that an org or workspace the caller may
// not see is not found before a runtime is. An id that is no UUID is 400
// invalid_runtime_id; a runtime not there is 404 runtime_not_found.
func (p Path) InWorkspace(ctx context.Context, workspaceID, id string) (store.Runtime, error) {
	if !store.IsID(id) {
		return store.Runtime{}, errdefs.InvalidArgument("invalid_runtime_id", "%q is not a runtime id (a UUID)", id)
	}
	rt, found, err := p.lookup(ctx, workspaceID, id)
	switch {
	case err != nil:
		return store.Runtime{}, err
	case !found:
		return store.Runtime{}, errdefs.NotFound(ErrRuntimeNotFound.Code, "runtime %s not found", id).
			WithCause(&auth.Refusal{Reason: "unknown_runtime"})
	}
	return rt, nil
}

// lookup is runtime id when it is in workspace workspaceID; found is false
// when it is not there, or nowhere.
func (p Path) lookup(ctx context.Context, workspaceID, id string) (rt store.Runtime, found bool, err error) {
	rt, err = p.Access.store.GetRuntime(ctx, id)
	if errdefs.IsNotFound(err) {
		return store.Runtime{}, false, nil
	}
	if err != nil {
		return store.Runtime{}, false, err
	}
	return rt, workspaceID != "" && rt.WorkspaceID == workspaceID, nil
}
