package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// SessionIDHeader names the session a streamed prompt or task runs in:
// the events themselves do not carry it.
const SessionIDHeader = "X-Paddock-Session-Id"

// Prompt runs one turn of an agent harness in the runtime's sandbox and
// returns once it ends. A turn that ran and failed is a result with Error
// set, not an error: an error means the turn could not be run (code
// "harness_secret_missing" when the harness has no model credentials,
// "session_busy" while another turn of the session runs, and the errors
// of Exec). A paused or archived runtime is woken first.
func (c *Client) Prompt(ctx context.Context, org, ws, runtimeID string, req PromptRequest) (PromptResult, error) {
	return call[PromptResult](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "prompt"), nil, req)
}

// PromptStream runs one turn like Prompt and streams its events as they
// happen. Ending ctx or closing the stream ends the request.
func (c *Client) PromptStream(ctx context.Context, org, ws, runtimeID string, req PromptRequest) (*SessionEventStream, error) {
	return c.sessionStream(ctx, runtimeRoute(org, ws, runtimeID, "prompt"), req)
}

// Task runs a prompt to completion in a new session of kind task; req
// must not name a session.
func (c *Client) Task(ctx context.Context, org, ws, runtimeID string, req PromptRequest) (PromptResult, error) {
	return call[PromptResult](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "task"), nil, req)
}

// TaskStream runs a task like Task and streams its events.
func (c *Client) TaskStream(ctx context.Context, org, ws, runtimeID string, req PromptRequest) (*SessionEventStream, error) {
	return c.sessionStream(ctx, runtimeRoute(org, ws, runtimeID, "task"), req)
}

// ListSessions lists one page of a runtime's sessions, newest first.
func (c *Client) ListSessions(ctx context.Context, org, ws, runtimeID string, opts ListOptions) (List[Session], error) {
	return call[List[Session]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "sessions"), opts.query(), nil)
}

// GetSession returns a session with its whole transcript.
func (c *Client) GetSession(ctx context.Context, org, ws, runtimeID, sessionID string) (SessionTranscript, error) {
	return call[SessionTranscript](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "sessions", sessionID), nil, nil)
}

func (c *Client) sessionStream(ctx context.Context, r route, req PromptRequest) (*SessionEventStream, error) {
	resp, err := c.postNDJSON(ctx, r, "prompt", req)
	if err != nil {
		return nil, err
	}
	return &SessionEventStream{
		SessionID: resp.Header.Get(SessionIDHeader),
		body:      resp.Body,
		dec:       json.NewDecoder(resp.Body),
	}, nil
}

// SessionEventStream is a streamed turn: its events in order, ending with
// a done event. It is not safe for concurrent use.
type SessionEventStream struct {
	// SessionID is the session the turn runs in; pass it as
	// PromptRequest.SessionID to continue it. It is empty when the server
	// did not say.
	SessionID string

	body    io.ReadCloser
	dec     *json.Decoder
	done    *TurnDone
	lastErr *TurnError // the turn's last error event
	err     error
}

// Next returns the next event. Error events are events: the harness's
// failures are part of the transcript, and the turn still ends with done.
// After done, Next returns io.EOF. A stream that ends before done is an
// error: an *Error carrying the last error event when there was one
// (status 503, or 500 for code "internal"), else io.ErrUnexpectedEOF.
func (s *SessionEventStream) Next() (SessionEvent, error) {
	if s.err != nil {
		return SessionEvent{}, s.err
	}
	var ev SessionEvent
	err := s.dec.Decode(&ev)
	switch {
	case errors.Is(err, io.EOF) && s.done != nil:
		s.err = io.EOF
	case errors.Is(err, io.EOF) && s.lastErr != nil:
		e := &Error{Code: s.lastErr.Code, Message: s.lastErr.Message}
		if e.Code == "" {
			e.Code = "unavailable"
		}
		e.setStreamStatus()
		s.err = e
	case errors.Is(err, io.EOF):
		s.err = io.ErrUnexpectedEOF
	case err != nil:
		s.err = fmt.Errorf("paddock: read the event stream: %w", err)
	case s.done != nil:
		s.err = fmt.Errorf("paddock: the stream went on after its done event")
	default:
		switch ev.Type {
		case SessionEventError:
			s.lastErr = ev.Error
			if s.lastErr == nil {
				s.lastErr = &TurnError{Message: "the turn failed"}
			}
		case SessionEventDone:
			s.done = ev.Done
			if s.done == nil {
				s.done = &TurnDone{}
			}
		}
		return ev, nil
	}
	return SessionEvent{}, s.err
}

// Done returns how the turn ended, once its done event was read.
func (s *SessionEventStream) Done() (TurnDone, bool) {
	if s.done == nil {
		return TurnDone{}, false
	}
	return *s.done, true
}

// Failed reports whether the turn, once done, failed: its harness exited
// non-zero, or it reported an error.
func (s *SessionEventStream) Failed() bool {
	return s.done != nil && (s.done.ExitCode != 0 || s.lastErr != nil)
}

// Close ends the stream and its request.
func (s *SessionEventStream) Close() error {
	if s.err == nil {
		s.err = errors.New("paddock: the stream is closed")
	}
	return s.body.Close()
}
