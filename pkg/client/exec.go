package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

const ndjson = "application/x-ndjson"

// Exec runs a process in the runtime's sandbox and returns its output once
// it exits; each stream keeps at most req.MaxOutputBytes (Truncated says
// more was produced). A background process returns at once, with no Exit.
// The process's exit code is in the result, not in the error: an error
// means the process could not be run (a missing command is code
// "command_not_found"; a runtime that is not running, a conflict).
func (c *Client) Exec(ctx context.Context, org, ws, runtimeID string, req ExecRequest) (ExecResult, error) {
	return call[ExecResult](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "exec"), nil, req)
}

// ExecStream starts a process and returns once it has started, streaming
// its events as they happen. Ending ctx or closing the stream before the
// process exits kills a foreground process; a background one keeps running
// and can be attached to again (Attach).
func (c *Client) ExecStream(ctx context.Context, org, ws, runtimeID string, req ExecRequest) (*ExecStream, error) {
	resp, err := c.postNDJSON(ctx, runtimeRoute(org, ws, runtimeID, "exec"), "exec request", req)
	if err != nil {
		return nil, err
	}
	return newExecStream(resp, true)
}

// postNDJSON posts body (what names it in errors) as JSON and opens the
// NDJSON stream that answers it.
func (c *Client) postNDJSON(ctx context.Context, r route, what string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("paddock: encode the %s: %w", what, err)
	}
	return c.open(ctx, http.MethodPost, r, nil, bytes.NewReader(b), "application/json", ndjson)
}

// AttachOptions say where an Attach starts and whether it follows.
type AttachOptions struct {
	// StdoutOffset and StderrOffset are the first bytes wanted of each
	// stream (0: all the agent still holds; Process.StdoutBytes: only
	// what comes next).
	StdoutOffset, StderrOffset int64
	// NoFollow replays what is buffered and ends, without waiting for the
	// process to exit.
	NoFollow bool
}

// Attach replays a process's output from the given offsets and follows it
// until it exits. Output the agent no longer holds arrives as lost
// events. Closing the stream does not affect the process.
func (c *Client) Attach(ctx context.Context, org, ws, runtimeID, processID string, opts AttachOptions) (*ExecStream, error) {
	q := url.Values{}
	if opts.StdoutOffset != 0 {
		q.Set("stdout_offset", strconv.FormatInt(opts.StdoutOffset, 10))
	}
	if opts.StderrOffset != 0 {
		q.Set("stderr_offset", strconv.FormatInt(opts.StderrOffset, 10))
	}
	if opts.NoFollow {
		q.Set("follow", "false")
	}
	r := runtimeRoute(org, ws, runtimeID, "processes", processID, "attach")
	resp, err := c.open(ctx, http.MethodGet, r, q, nil, "", ndjson)
	if err != nil {
		return nil, err
	}
	return newExecStream(resp, !opts.NoFollow)
}

// ListProcesses lists the running processes of the runtime's sandbox and
// the most recent exited background ones.
func (c *Client) ListProcesses(ctx context.Context, org, ws, runtimeID string) ([]Process, error) {
	l, err := call[List[Process]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "processes"), nil, nil)
	return l.Items, err
}

// KillAllProcesses kills every process in the runtime's sandbox except its
// agent — foreground and background processes, terminals and what they
// left behind — and says how many it killed. A paused runtime is woken
// first, as for exec.
func (c *Client) KillAllProcesses(ctx context.Context, org, ws, runtimeID string) (KillAllResult, error) {
	return call[KillAllResult](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "processes", "kill-all"), nil, nil)
}

// GetProcess describes one process; an unknown id is code
// "process_not_found".
func (c *Client) GetProcess(ctx context.Context, org, ws, runtimeID, processID string) (Process, error) {
	return call[Process](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "processes", processID), nil, nil)
}

// SignalProcess sends a signal to a process's group (or to the process
// alone with req.ProcessOnly).
func (c *Client) SignalProcess(ctx context.Context, org, ws, runtimeID, processID string, req SignalRequest) error {
	return c.callDiscard(ctx, http.MethodPost, runtimeRoute(org, ws, runtimeID, "processes", processID, "signal"), nil, req)
}

// WriteStdin streams r to the stdin of a process started with OpenStdin
// (or Stdin), and closes its stdin afterwards if closeStdin. It returns the
// bytes delivered.
func (c *Client) WriteStdin(ctx context.Context, org, ws, runtimeID, processID string, r io.Reader, closeStdin bool) (int64, error) {
	var q url.Values
	if closeStdin {
		q = url.Values{"close": {"true"}}
	}
	rt := runtimeRoute(org, ws, runtimeID, "processes", processID, "stdin")
	res, err := sendFor[StdinResult](ctx, c, http.MethodPost, rt, q, r, "application/octet-stream")
	return res.Bytes, err
}

// ErrNotExited is returned by Wait on a stream that ended before the
// process exited: an Attach with NoFollow of a running process.
var ErrNotExited = errors.New("paddock: the process has not exited")

// ExecStream is a streamed exec or attach: the process's events, in order.
// It is not safe for concurrent use.
type ExecStream struct {
	// ID and PID identify the process (in the sandbox's agent and its
	// process table).
	ID  string
	PID int

	body   io.ReadCloser
	dec    *json.Decoder
	follow bool
	exit   *ExitStatus
	err    error
}

func newExecStream(resp *http.Response, follow bool) (*ExecStream, error) {
	s := &ExecStream{body: resp.Body, dec: json.NewDecoder(resp.Body), follow: follow}
	ev, err := s.Recv()
	if err == nil && ev.Event != EventStarted {
		err = fmt.Errorf("paddock: the stream began with a %q event, not started", ev.Event)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.ID, s.PID = ev.ID, ev.PID
	return s, nil
}

// Recv returns the next event. After the exit event, or the end of a
// replay, it returns io.EOF. A stream that breaks is an error: an *Error
// when the server said why (status 503, or 500 for an internal error), or
// io.ErrUnexpectedEOF.
func (s *ExecStream) Recv() (ExecEvent, error) {
	if s.err != nil {
		return ExecEvent{}, s.err
	}
	var ev ExecEvent
	err := s.dec.Decode(&ev)
	switch {
	case errors.Is(err, io.EOF) && (s.exit != nil || !s.follow):
		s.err = io.EOF
	case errors.Is(err, io.EOF):
		s.err = io.ErrUnexpectedEOF
	case err != nil:
		s.err = fmt.Errorf("paddock: read the event stream: %w", err)
	case ev.Event == EventError:
		e := ev.Error
		if e == nil {
			e = &Error{Code: "unavailable", Message: "the stream ended with an error"}
		}
		e.setStreamStatus()
		s.err = e
	case ev.Event == EventExit:
		s.exit = ev.Exit
		if s.exit == nil {
			s.exit = &ExitStatus{}
		}
		return ev, nil
	default:
		return ev, nil
	}
	return ExecEvent{}, s.err
}

// Wait copies the process's output to stdout and stderr (either may be nil
// to discard it) until it exits, closes the stream and returns how the
// process ended.
func (s *ExecStream) Wait(stdout, stderr io.Writer) (ExitStatus, error) {
	defer s.Close()
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			if s.exit != nil {
				return *s.exit, nil
			}
			return ExitStatus{}, ErrNotExited
		}
		if err != nil {
			return ExitStatus{}, err
		}
		if ev.Event == EventExit {
			return *s.exit, nil
		}
		if ev.Event != EventOutput {
			continue
		}
		w := stdout
		if ev.Stream == StreamStderr {
			w = stderr
		}
		if w != nil {
			if _, err := w.Write(ev.Data); err != nil {
				return ExitStatus{}, err
			}
		}
	}
}

// Exit returns how the process ended, once the exit event was read.
func (s *ExecStream) Exit() (ExitStatus, bool) {
	if s.exit == nil {
		return ExitStatus{}, false
	}
	return *s.exit, true
}

// Close ends the stream.
func (s *ExecStream) Close() error {
	if s.err == nil {
		s.err = errors.New("paddock: the stream is closed")
	}
	return s.body.Close()
}
