package fleetevents

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// message is what one replica sends the others: which runtime moved
// (ids, never the rows, which the receiver reads), or an egress decision
// (the decision itself: its row is written in batches, later, and it is
// small: a host name is at most 253 bytes).
type message struct {
	Replica string `json:"r"`
	// Kind: "runtime" or "egress".
	Kind string `json:"k"`
	// Of a runtime event: its kind, the runtime's ids, the kill reason,
	// whether the sandbox is new, when.
	Event     string    `json:"e,omitempty"`
	Runtime   string    `json:"id,omitempty"`
	Org       string    `json:"o,omitempty"`
	Workspace string    `json:"w,omitempty"`
	Project   string    `json:"p,omitempty"`
	Reason    string    `json:"re,omitempty"`
	Fresh     bool      `json:"f,omitempty"`
	At        time.Time `json:"at"`
	// Of an egress decision.
	Egress *egressWire `json:"d,omitempty"`
}

// egressWire is an egress decision between replicas.
type egressWire struct {
	ID          string        `json:"id"`
	OrgID       string        `json:"org_id"`
	WorkspaceID string        `json:"workspace_id"`
	RuntimeID   string        `json:"runtime_id"`
	SandboxID   string        `json:"sandbox_id"`
	Allowed     bool          `json:"allowed"`
	Reason      string        `json:"reason"`
	Refusal     string        `json:"refusal,omitempty"`
	Method      string        `json:"method"`
	Host        string        `json:"host"`
	Port        int           `json:"port"`
	Addr        string        `json:"addr,omitempty"`
	BytesUp     int64         `json:"bytes_up"`
	BytesDown   int64         `json:"bytes_down"`
	Duration    time.Duration `json:"duration"`
	Brokered    bool          `json:"brokered,omitempty"`
}

func runtimeMessage(replica string, e runtime.Event) message {
	return message{Replica: replica, Kind: "runtime", Event: string(e.Kind), Runtime: e.Runtime.ID, Org: e.Runtime.OrgID,
		Workspace: e.Runtime.WorkspaceID, Project: e.Runtime.ProjectID, Reason: e.Reason, Fresh: e.Fresh, At: e.At}
}

func egressMessage(replica string, d store.EgressDecision) message {
	return message{Replica: replica, Kind: "egress", At: d.At, Egress: &egressWire{
		ID: d.ID, OrgID: d.OrgID, WorkspaceID: d.WorkspaceID, RuntimeID: d.RuntimeID, SandboxID: d.SandboxID,
		Allowed: d.Allowed, Reason: d.Reason, Refusal: d.Refusal, Method: d.Method, Host: d.Host, Port: d.Port,
		Addr: d.Addr, BytesUp: d.BytesUp, BytesDown: d.BytesDown, Duration: d.Duration, Brokered: d.Brokered,
	}}
}

// encode is m as a payload of at most MaxMessage bytes.
func (m message) encode() (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if len(b) > MaxMessage {
		return "", fmt.Errorf("a %s event of %d bytes is over the bus's %d", m.Kind, len(b), MaxMessage)
	}
	return string(b), nil
}

func decode(payload string) (message, error) {
	var m message
	err := json.Unmarshal([]byte(payload), &m)
	return m, err
}

// event is the event m tells of, with the rows read now; ok is false
// when there is nothing to tell (the runtime was deleted since: its
// deletion is told of in turn).
func (m message) event(ctx context.Context, rows Rows) (Event, bool, error) {
	switch m.Kind {
	case "egress":
		if m.Egress == nil {
			return Event{}, false, fmt.Errorf("an egress event without its decision")
		}
		w := m.Egress
		return Event{Egress: &store.EgressDecision{
			ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, RuntimeID: w.RuntimeID, SandboxID: w.SandboxID,
			At: m.At, Allowed: w.Allowed, Reason: w.Reason, Refusal: w.Refusal, Method: w.Method, Host: w.Host,
			Port: w.Port, Addr: w.Addr, BytesUp: w.BytesUp, BytesDown: w.BytesDown, Duration: w.Duration, Brokered: w.Brokered,
		}}, true, nil
	case "runtime":
		return m.runtimeEvent(ctx, rows)
	}
	return Event{}, false, fmt.Errorf("an event of unknown kind %q", m.Kind)
}

// runtimeEvent reads the runtime and its sandbox for m. A deleted
// runtime's row is gone: its event carries the ids sent.
func (m message) runtimeEvent(ctx context.Context, rows Rows) (Event, bool, error) {
	e := runtime.Event{Kind: runtime.EventKind(m.Event), Reason: m.Reason, Fresh: m.Fresh, At: m.At}
	rt, err := rows.GetRuntime(ctx, m.Runtime)
	switch {
	case errdefs.IsNotFound(err) && e.Kind == runtime.EventDeleted:
		rt = store.Runtime{ID: m.Runtime, OrgID: m.Org, WorkspaceID: m.Workspace, ProjectID: m.Project}
	case errdefs.IsNotFound(err):
		return Event{}, false, nil
	case err != nil:
		return Event{}, false, err
	}
	// The row as read: no other org's, whatever the message said.
	e.Runtime = rt
	if rt.CurrentSandboxID != "" {
		sb, err := rows.GetSandbox(ctx, rt.CurrentSandboxID)
		if err != nil && !errdefs.IsNotFound(err) {
			return Event{}, false, err
		}
		e.Sandbox = sb
	}
	return Event{Runtime: &e}, true, nil
}
