package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Bounds of an exec request.
const (
	maxArgs          = 4096
	maxEnv           = 4096
	maxPathBytes     = 4096
	defaultMaxOutput = 1 << 20
	maxCollected     = 16 << 20
	maxTimeoutMS     = int64(30 * 24 * time.Hour / time.Millisecond)
	ndjsonType       = "application/x-ndjson"
)

// checkPath accepts an absolute path inside the sandbox; field names it in
// the error.
func checkPath(field, p string) error {
	switch {
	case p == "":
		return errdefs.InvalidArgument("invalid_path", "%s is required: an absolute path in the sandbox", field)
	case strings.IndexByte(p, 0) >= 0:
		return errdefs.InvalidArgument("invalid_path", "%s contains a NUL byte", field)
	case !strings.HasPrefix(p, "/"):
		return errdefs.InvalidArgument("invalid_path", "%s %q is not absolute; paths are interpreted inside the sandbox and must start with /", field, p)
	case len(p) > maxPathBytes:
		return errdefs.InvalidArgument("invalid_path", "%s is longer than %d bytes", field, maxPathBytes)
	}
	return nil
}

// checkUser accepts an account of the sandbox to run as; "" is the
// runtime's.
func checkUser(user string) error {
	if user != "" && user != store.UserDefault && user != store.UserRoot {
		return errdefs.InvalidArgument("invalid_user", "user %q does not exist in the sandbox: use %q or %q", user, store.UserDefault, store.UserRoot)
	}
	return nil
}

// execRequest checks req and turns it into the agent's request.
func execRequest(req client.ExecRequest, streamed bool) (agentconn.ExecRequest, error) {
	var out agentconn.ExecRequest
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return out, errdefs.InvalidArgument("invalid_command", "argv must name a command")
	}
	if len(req.Argv) > maxArgs {
		return out, errdefs.InvalidArgument("invalid_command", "argv has more than %d arguments", maxArgs)
	}
	for i, arg := range req.Argv {
		if strings.IndexByte(arg, 0) >= 0 {
			return out, errdefs.InvalidArgument("invalid_command", "argv[%d] contains a NUL byte", i)
		}
	}
	if len(req.Env) > maxEnv {
		return out, errdefs.InvalidArgument("invalid_env", "env has more than %d variables", maxEnv)
	}
	for k, v := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.IndexByte(v, 0) >= 0 {
			return out, errdefs.InvalidArgument("invalid_env", "env variable %q: names must be non-empty without '=' or NUL, values without NUL", k)
		}
	}
	if req.Cwd != "" {
		if err := checkPath("cwd", req.Cwd); err != nil {
			return out, err
		}
	}
	if err := checkUser(req.User); err != nil {
		return out, err
	}
	if req.TimeoutMS < 0 || req.TimeoutMS > maxTimeoutMS {
		return out, errdefs.InvalidArgument("invalid_timeout", "timeout_ms must be between 0 and %d", maxTimeoutMS)
	}
	if req.MaxOutputBytes < 0 || req.MaxOutputBytes > maxCollected {
		return out, errdefs.InvalidArgument("invalid_max_output", "max_output_bytes must be between 0 and %d", maxCollected)
	}
	if req.OpenStdin && req.Stdin != nil {
		return out, errdefs.InvalidArgument("invalid_stdin", "stdin and open_stdin are exclusive")
	}
	if req.OpenStdin && !streamed {
		return out, errdefs.InvalidArgument("invalid_stdin", "open_stdin needs a streamed exec (Accept: %s)", ndjsonType)
	}
	out = agentconn.ExecRequest{
		Argv:       req.Argv,
		Env:        req.Env,
		ClearEnv:   req.ClearEnv,
		Cwd:        req.Cwd,
		User:       req.User,
		OpenStdin:  req.OpenStdin,
		Timeout:    time.Duration(req.TimeoutMS) * time.Millisecond,
		Background: req.Background,
	}
	if req.Stdin != nil {
		out.Stdin = bytes.NewReader(req.Stdin)
	}
	return out, nil
}

// wantsNDJSON reports whether the client asked for a streamed answer.
func wantsNDJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == ndjsonType {
			return true
		}
	}
	return false
}

// exec starts a process. With Accept: application/x-ndjson the answer is
// a stream of events, flushed one by one; otherwise it is one JSON object
// with the collected (bounded) output and the exit status.
func (a *API) exec(w http.ResponseWriter, r *http.Request) error {
	var body client.ExecRequest
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	streamed := wantsNDJSON(r)
	req, err := execRequest(body, streamed)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if !req.Background {
		// A foreground exec holds its stream until the process ends, or
		// until its caller's credential is revoked.
		release, err := a.execCaps.acquire(ctx, r.PathValue("runtime_id"), identity(r).Principal())
		if err != nil {
			return err
		}
		defer release()
		var end func()
		ctx, end = a.live.open(ctx, identity(r), access(r).Org.ID)
		defer end()
	}
	c, err := a.agentOf(r)
	if err != nil {
		return err
	}
	es, err := c.Exec(ctx, req)
	if err != nil {
		return a.cutOr(ctx, r, err)
	}
	if streamed {
		a.stream(ctx, w, es)
		return nil
	}
	return a.cutOr(ctx, r, collect(w, es, req.Background, body.MaxOutputBytes))
}

// cutOr is err, or, when the caller's credential or membership ended
// while the call ran (errStreamCut cut ctx, and so the agent call), what
// the door answers the caller now (cutAnswer): not the broken call's
// error, which depends on how the call reached the agent.
func (a *API) cutOr(ctx context.Context, r *http.Request, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errStreamCut) {
		return a.cutAnswer(r, member)
	}
	return err
}

// collect waits for a process to end and answers its output, each stream
// bounded by limit (0: the default). A background process is answered at
// once with its id.
func collect(w http.ResponseWriter, es *agentconn.ExecStream, background bool, limit int64) error {
	defer es.Close()
	if limit == 0 {
		limit = defaultMaxOutput
	}
	res := client.ExecResult{ID: es.ID(), PID: es.PID(), Stdout: []byte{}, Stderr: []byte{}}
	if background {
		writeJSON(w, http.StatusAccepted, res)
		return nil
	}
	stdout := &agentconn.LimitedBuffer{Max: int(limit)}
	stderr := &agentconn.LimitedBuffer{Max: int(limit)}
	st, err := es.Wait(stdout, stderr)
	if err != nil {
		return err
	}
	res.Exit = exitOut(st)
	// An empty stream stays "" in JSON, not null.
	if b := stdout.Bytes(); len(b) > 0 {
		res.Stdout = b
	}
	if b := stderr.Bytes(); len(b) > 0 {
		res.Stderr = b
	}
	res.Truncated = stdout.Truncated || stderr.Truncated
	writeJSON(w, http.StatusOK, res)
	return nil
}

// stream answers a process's events as NDJSON, started first, until it
// exits, the stream ends (a replay), or the client goes away.
func (a *API) stream(ctx context.Context, w http.ResponseWriter, es *agentconn.ExecStream) {
	defer es.Close()
	out := newEventWriter(w)
	if out.send(client.ExecEvent{Event: client.EventStarted, ID: es.ID(), PID: es.PID()}) != nil {
		return
	}
	for {
		ev, err := es.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				out.sendError(ctx, a, err)
			}
			return
		}
		if out.send(eventOut(ev)) != nil || ev.Exit != nil {
			return
		}
	}
}

// eventWriter writes NDJSON events, flushing each.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	enc     *json.Encoder
	started bool
}

func newEventWriter(w http.ResponseWriter) *eventWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &eventWriter{w: w, rc: http.NewResponseController(w), enc: enc}
}

func (e *eventWriter) send(ev any) error {
	if !e.started {
		e.started = true
		h := e.w.Header()
		h.Set("Content-Type", ndjsonType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		e.w.WriteHeader(http.StatusOK)
	}
	if err := e.enc.Encode(ev); err != nil {
		return err
	}
	return e.rc.Flush()
}

// sendError ends a stream with an error event: the one error body, as an
// event, since the status line has been sent.
func (e *eventWriter) sendError(ctx context.Context, a *API, err error) {
	body := client.Error{RequestID: requestIDFrom(ctx), Code: "internal", Message: "internal error; the server logged the details under this request id"}
	if pe, ok := errdefs.Public(err); ok {
		body.Code, body.Message = pe.Code, pe.Message
		a.logger.InfoContext(ctx, "stream failed", "code", pe.Code, "err", err)
	} else {
		a.logger.ErrorContext(ctx, "stream failed", "err", err)
	}
	_ = e.send(client.ExecEvent{Event: client.EventError, Error: &body})
}

func eventOut(ev agentconn.Event) client.ExecEvent {
	switch {
	case ev.Exit != nil:
		return client.ExecEvent{Event: client.EventExit, Exit: exitOut(*ev.Exit)}
	case ev.Lost > 0:
		return client.ExecEvent{Event: client.EventLost, Stream: ev.Stream.String(), Offset: ev.Offset, Bytes: ev.Lost}
	}
	return client.ExecEvent{Event: client.EventOutput, Stream: ev.Stream.String(), Offset: ev.Offset, Data: ev.Data}
}

func exitOut(st agentconn.ExitStatus) *client.ExitStatus {
	out := &client.ExitStatus{
		Code:        st.Code,
		Signal:      st.Signal,
		TimedOut:    st.TimedOut,
		OOMKilled:   st.OOMKilled,
		StdoutBytes: st.StdoutBytes,
		StderrBytes: st.StderrBytes,
	}
	if !st.ExitedAt.IsZero() {
		out.ExitedAt = st.ExitedAt.UTC()
	}
	return out
}
