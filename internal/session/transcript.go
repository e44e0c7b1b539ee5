package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// Session kinds.
const (
	KindPrompt = "prompt"
	KindTask   = "task"
)

// Session states.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Request is what a turn asks for.
type Request struct {
	Prompt string
	// Harness names the harness; empty: the session's, or the default.
	Harness string
	// SessionID continues a session (prompt only); empty starts one.
	SessionID string
	Model     string
	// TimeoutSeconds bounds the turn; 0 is DefaultTimeout.
	TimeoutSeconds int64
}

// eventVersion is the shape of the event a transcript row keeps (its
// "v"): the JSON tags of harness.Event and the types it holds. A row
// without "v" was written before the shape had a version, in the same
// shape as version 1. A change to those tags takes a new version, and
// decodeEvent goes on reading the older ones.
const eventVersion = 1

// storedEvent is an event as a transcript row keeps it.
type storedEvent struct {
	V int `json:"v"`
	harness.Event
}

// encodeEvent is e as a transcript row keeps it, at eventVersion.
func encodeEvent(e harness.Event) ([]byte, error) {
	return json.Marshal(storedEvent{V: eventVersion, Event: e})
}

// decodeEvent reads an event a transcript row keeps, of any version this
// server knows.
func decodeEvent(r store.SessionEvent) (harness.Event, error) {
	var se storedEvent
	if err := json.Unmarshal(r.Body, &se); err != nil {
		return harness.Event{}, fmt.Errorf("event %d of session %s: %w", r.Seq, r.SessionID, err)
	}
	if se.V > eventVersion {
		return harness.Event{}, fmt.Errorf("event %d of session %s is of version %d, newer than this server's %d", r.Seq, r.SessionID, se.V, eventVersion)
	}
	return se.Event, nil
}

// Sessions lists one page of the runtime's sessions, newest first.
func (s *Service) Sessions(ctx context.Context, rt store.Runtime, page store.Page) ([]store.Session, string, error) {
	return s.store.ListSessions(ctx, rt.ID, page)
}

// Session returns a session of the runtime with its transcript.
func (s *Service) Session(ctx context.Context, rt store.Runtime, id string) (store.Session, []harness.Event, error) {
	sess, err := s.store.GetSession(ctx, id)
	if err != nil || sess.RuntimeID != rt.ID {
		if err == nil || errdefs.IsNotFound(err) {
			return store.Session{}, nil, errdefs.NotFound(CodeSessionNotFound, "session %s not found on runtime %s", id, rt.ID)
		}
		return store.Session{}, nil, err
	}
	events, err := s.Transcript(ctx, sess)
	return sess, events, err
}
