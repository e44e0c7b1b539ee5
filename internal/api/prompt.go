package api

import (
	"net/http"
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// prompt runs one turn of a harness in the runtime's sandbox, in a new
// session or continuing one.
func (a *API) prompt(w http.ResponseWriter, r *http.Request) error {
	return a.runTurn(w, r, session.KindPrompt)
}

// task runs a harness to completion in a new session of its own.
func (a *API) task(w http.ResponseWriter, r *http.Request) error {
	return a.runTurn(w, r, session.KindTask)
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
	if kind == session.KindTask && req.SessionID != "" {
		return errdefs.InvalidArgument("invalid_argument", "a task runs in a session of its own; use prompt to continue session %s", req.SessionID)
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	var emit func(harness.Event) error
	var ew *eventWriter
	if wantsNDJSON(r) {
		ew = newEventWriter(w)
		emit = func(e harness.Event) error { return ew.send(sessionEventOut(e)) }
	}
	turn := session.Turn{Kind: kind, Request: promptIn(req), Started: func(s store.Session) {
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
	writeJSON(w, http.StatusOK, client.PromptResult{
		Session: sessionOut(res.Session), Result: res.Result, Error: res.Error, Usage: turnUsageOut(res.Usage), Events: sessionEventsOut(res.Events),
	})
	return nil
}

// promptIn is a turn's request as the session service takes it.
func promptIn(req client.PromptRequest) session.Request {
	return session.Request{Prompt: req.Prompt, Harness: req.Harness, SessionID: req.SessionID, Model: req.Model, TimeoutSeconds: req.TimeoutSeconds}
}

// sessionEventsOut shows a transcript's events, never nil.
func sessionEventsOut(events []harness.Event) []client.SessionEvent {
	out := make([]client.SessionEvent, 0, len(events))
	for _, e := range events {
		out = append(out, sessionEventOut(e))
	}
	return out
}

// sessionEventOut shows one event of a transcript, field for field.
func sessionEventOut(e harness.Event) client.SessionEvent {
	out := client.SessionEvent{Seq: e.Seq, Turn: e.Turn, Time: e.Time, Type: e.Type, Role: e.Role, Text: e.Text, Usage: turnUsageOut(e.Usage)}
	if e.Tool != nil {
		out.Tool = &client.ToolCall{ID: e.Tool.ID, Name: e.Tool.Name, Input: e.Tool.Input}
	}
	if e.Result != nil {
		out.Result = &client.ToolResult{ID: e.Result.ID, Output: e.Result.Output, IsError: e.Result.IsError}
	}
	if e.Error != nil {
		out.Error = &client.TurnError{Code: e.Error.Code, Message: e.Error.Message}
	}
	if e.Done != nil {
		out.Done = &client.TurnDone{ExitCode: e.Done.ExitCode, HarnessSessionID: e.Done.HarnessSessionID, Result: e.Done.Result}
	}
	return out
}

func turnUsageOut(u *harness.TurnUsage) *client.TurnUsage {
	if u == nil {
		return nil
	}
	return &client.TurnUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CostUSD: u.CostUSD}
}

// harnessInfo is h as GET /api/capabilities lists it; the caller fills in
// Installed and Images, which depend on the installation.
func harnessInfo(h *harness.Harness) client.HarnessInfo {
	return client.HarnessInfo{Name: h.Name, Binary: h.Binary, Secrets: slices.Clone(h.Secrets), WrittenAgainst: h.WrittenAgainst}
}

func sessionOut(s store.Session) client.Session {
	return client.Session{
		ID: s.ID, RuntimeID: s.RuntimeID, Kind: s.Kind, Harness: s.Harness, HarnessSessionID: s.HarnessSessionID,
		Status: s.Status, Title: s.Title, Turns: s.Turns, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
}

// listSessions lists the runtime's sessions, newest first.
func (a *API) listSessions(w http.ResponseWriter, r *http.Request) error {
	svc := a.sessions
	rt, page, err := a.runtimePage(r)
	if err != nil {
		return err
	}
	ss, next, err := svc.Sessions(r.Context(), rt, page)
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
	s, events, err := svc.Session(r.Context(), rt, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.SessionTranscript{Session: sessionOut(s), Events: sessionEventsOut(events)})
	return nil
}
