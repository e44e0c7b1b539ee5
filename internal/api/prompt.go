package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// prompt runs one turn of a harness in the runtime's sandbox, in a new
// session or continuing one.
func (a *API) prompt(w http.ResponseWriter, r *http.Request) error {
	return a.runTurn(w, r, client.SessionPrompt)
}

// task runs a harness to completion in a new session of its own.
func (a *API) task(w http.ResponseWriter, r *http.Request) error {
	return a.runTurn(w, r, client.SessionTask)
}

// runTurn answers a turn: with Accept: application/x-ndjson its events
// as NDJSON, each flushed as it is parsed; otherwise one PromptResult
// once it ends. Errors found before the harness runs are answered as
// errors; after that, a failure is the turn's own error and done events.
func (a *API) runTurn(w http.ResponseWriter, r *http.Request, kind string) error {
	svc := a.sessions
	var req client.PromptRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if kind == client.SessionTask && req.SessionID != "" {
		return errdefs.InvalidArgument("invalid_argument", "a task runs in a session of its own; use prompt to continue session %s", req.SessionID)
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	var emit func(client.SessionEvent) error
	var ew *eventWriter
	if wantsNDJSON(r) {
		ew = newEventWriter(w)
		emit = func(e client.SessionEvent) error { return ew.send(e) }
	}
	turn := session.Turn{Kind: kind, Request: req, Started: func(s store.Session) {
		w.Header().Set(client.SessionIDHeader, s.ID)
	}}
	res, err := svc.Run(r.Context(), rt, turn, emit)
	if err != nil {
		if ew != nil && ew.started {
			a.logger.WarnContext(r.Context(), "recording a turn", "err", err)
			return nil // the stream has begun; its events say how it ended
		}
		return err
	}
	if emit != nil {
		return nil
	}
	events := res.Events
	if events == nil {
		events = []client.SessionEvent{}
	}
	writeJSON(w, http.StatusOK, client.PromptResult{
		Session: sessionOut(res.Session), Result: res.Result, Error: res.Error, Usage: res.Usage, Events: events,
	})
	return nil
}

func sessionOut(s store.Session) client.Session {
	return client.Session{
		ID: s.ID, RuntimeID: s.RuntimeID, Kind: s.Kind, Harness: s.Harness, HarnessSessionID: s.HarnessSessionID,
		Status: s.Status, Title: s.Title, Turns: s.Turns, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
}

// listSessions lists the runtime's sessions, newest first.
func (a *API) listSessions(w http.ResponseWriter, r *http.Request) error {
	rt, page, err := a.runtimePage(r)
	if err != nil {
		return err
	}
	ss, next, err := a.store.ListSessions(r.Context(), rt.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ss, next, sessionOut))
	return nil
}

// getSession answers a session with its transcript.
func (a *API) getSession(w http.ResponseWriter, r *http.Request) error {
	svc := a.sessions
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	id := r.PathValue("session_id")
	s, err := a.store.GetSession(r.Context(), id)
	if err != nil || s.RuntimeID != rt.ID {
		if err == nil || errdefs.IsNotFound(err) {
			return errdefs.NotFound(session.CodeSessionNotFound, "session %s not found on runtime %s", id, rt.ID)
		}
		return err
	}
	events, err := svc.Transcript(r.Context(), s)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.SessionTranscript{Session: sessionOut(s), Events: events})
	return nil
}
