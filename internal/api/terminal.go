package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

// termRE is the shape of a TERM value.
var termRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// terminalReadLimit bounds one message from the client.
const terminalReadLimit = 1 << 20

// termIDRE is the shape of a terminal id (the agent's "t-" and 32 hex
// digits).
var termIDRE = regexp.MustCompile(`^t-[0-9a-f]{32}$`)

// terminalAttach is a request to re-attach a terminal: its id and the
// offset to replay its output from.
type terminalAttach struct {
	id     string
	offset int64
}

// terminalAttachOf reads attach and offset; nil without attach. A
// re-attached terminal keeps its command, directory, user and TERM (a
// term given is not used).
func terminalAttachOf(r *http.Request) (*terminalAttach, error) {
	q := r.URL.Query()
	if !q.Has("attach") {
		if q.Has("offset") {
			return nil, errdefs.InvalidArgument("invalid_attach", "offset is for re-attaching a terminal: give attach too")
		}
		return nil, nil
	}
	at := &terminalAttach{id: q.Get("attach")}
	if !termIDRE.MatchString(at.id) {
		return nil, errdefs.InvalidArgument("invalid_attach", "attach %q is not a terminal id", at.id)
	}
	for _, k := range []string{"argv", "cwd", "user"} {
		if q.Has(k) {
			return nil, errdefs.InvalidArgument("invalid_attach", "%s is for a new terminal; a re-attached one keeps its own", k)
		}
	}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, errdefs.InvalidArgument("invalid_offset", "offset must be an integer of at least 0")
		}
		at.offset = n
	}
	return at, nil
}

// terminalRequest reads the query of a terminal request: rows, cols,
// term, cwd, and argv (repeated; empty: the sandbox's shell).
func terminalRequest(r *http.Request) (agentconn.TerminalRequest, error) {
	q := r.URL.Query()
	var req agentconn.TerminalRequest
	for _, f := range []struct {
		name string
		dst  *int
	}{{"rows", &req.Rows}, {"cols", &req.Cols}} {
		s := q.Get(f.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 0xffff {
			return req, errdefs.InvalidArgument("invalid_size", "%s must be an integer from 1 to 65535", f.name)
		}
		*f.dst = n
	}
	if t := q.Get("term"); t != "" {
		if !termRE.MatchString(t) {
			return req, errdefs.InvalidArgument("invalid_term", "term %q is not a terminal type", t)
		}
		req.Term = t
	}
	if cwd := q.Get("cwd"); cwd != "" {
		if err := checkPath("cwd", cwd); err != nil {
			return req, err
		}
		req.Cwd = cwd
	}
	req.User = q.Get("user")
	if err := checkUser(req.User); err != nil {
		return req, err
	}
	req.Argv = q["argv"]
	if len(req.Argv) > maxArgs {
		return req, errdefs.InvalidArgument("invalid_command", "argv has more than %d arguments", maxArgs)
	}
	for i, arg := range req.Argv {
		if strings.IndexByte(arg, 0) >= 0 || (i == 0 && arg == "") {
			return req, errdefs.InvalidArgument("invalid_command", "argv[%d] is empty or contains a NUL byte", i)
		}
	}
	return req, nil
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, v := range strings.Split(r.Header.Get("Connection"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "upgrade") {
			return true
		}
	}
	return false
}

// terminal opens an interactive terminal in the sandbox over a WebSocket,
// or re-attaches one (attach, offset). Binary messages carry the
// terminal's bytes both ways; text messages carry control
// (client.TerminalMessage): started, then exit or error from the server,
// resize, signal and close from the client. A link that breaks leaves the
// terminal to the agent's grace, for a re-attach; a close (the message, or
// a normal closure) ends it, as does the caller's credential ending
// (live). The agent bounds the runtime's terminals, detached ones too. Everything that can fail before the upgrade
// answers the one JSON error body.
func (a *API) terminal(w http.ResponseWriter, r *http.Request) error {
	if !isWebSocket(r) {
		return errdefs.InvalidArgument("websocket_required", "the terminal is a WebSocket: send Connection: Upgrade and Upgrade: websocket")
	}
	at, err := terminalAttachOf(r)
	if err != nil {
		return err
	}
	req, err := terminalRequest(r)
	if err != nil {
		return err
	}
	// A re-attach holds the user's place alone: the terminal keeps its
	// place in its runtime's, which the agent counts (MaxTerminals).
	capRuntime := r.PathValue("runtime_id")
	if at != nil {
		capRuntime = ""
	}
	release, err := a.termCaps.acquire(r.Context(), capRuntime, identity(r).Principal())
	if err != nil {
		return err
	}
	defer release()
	// The terminal's scope is its runtime: a terminal id re-attaches only
	// through the runtime that opened it.
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	c, err := a.path.Dial(r.Context(), rt)
	if err != nil {
		return err
	}
	terminalHook("open", "")
	ctx, hold := a.live.hold(r.Context(), identity(r), access(r).Org.ID)
	defer hold.release()
	if errors.Is(context.Cause(ctx), errStreamCut) {
		return a.cutAnswer(r, member)
	}
	req.Scope, req.MaxTerminals = rt.ID, max(a.limits.TerminalsPerRuntime, 0)
	// The agent call is not ctx's: a cut for revocation closes the
	// terminal over it (termSession.cut) before it ends.
	term, err := openTerminal(r.Context(), c, req, at)
	if err != nil {
		return a.terminalRefused(err)
	}
	if at != nil {
		a.live.unpark(at.id)
	}
	s := &termSession{a: a, term: term, started: at != nil, ctx: ctx, hold: hold, cutDone: make(chan struct{}),
		closeDetached: terminalCloser(c, rt.ID, term.TerminalID())}
	defer s.end(context.AfterFunc(ctx, s.cut))
	// The console's cookie also authenticates this upgrade: the door held
	// it to this server's own Origin and Sec-Fetch-Site (consoleRequest).
	// Accept's own Origin check (the Host's) stays on beside it.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		// Accept answered the client.
		a.logger.InfoContext(ctx, "terminal upgrade failed", "err", err)
		return nil
	}
	defer conn.CloseNow()
	conn.SetReadLimit(terminalReadLimit)
	s.conn = conn
	if err := s.control(ctx, client.TerminalMessage{Type: client.TerminalStarted, ID: term.ID(), PID: term.PID(),
		TerminalID: term.TerminalID(), Offset: term.Offset()}); err != nil {
		return nil
	}
	s.started = true
	s.run(ctx)
	return nil
}

// openTerminal starts a terminal, or re-attaches one at its size.
func openTerminal(ctx context.Context, c *agentconn.Client, req agentconn.TerminalRequest, at *terminalAttach) (*agentconn.TerminalStream, error) {
	if at == nil {
		return c.Terminal(ctx, req)
	}
	term, err := c.AttachTerminal(ctx, req.Scope, at.id, at.offset)
	if err != nil {
		return nil, err
	}
	if req.Rows > 0 && req.Cols > 0 {
		// A terminal that has just ended answers with its exit, next.
		_ = term.Resize(req.Rows, req.Cols)
	}
	return term, nil
}

// terminalRefused is the agent's refusal of a terminal, its bound on
// the runtime's terminals (too_many_terminals) told as the API's cap.
func (a *API) terminalRefused(err error) error {
	if pe, ok := errdefs.Public(err); ok && pe.Code == "too_many_terminals" && errors.Is(err, errdefs.ErrResourceExhausted) {
		return errdefs.ResourceExhausted("too_many_terminals_per_runtime",
			"this runtime has %d terminals open or waiting to be re-attached, its most; close one first", a.limits.TerminalsPerRuntime)
	}
	return err
}

// terminalCloser returns what closes the terminal termID of scope once
// its call has ended: it re-attaches it through the agent client c and
// closes it. One already gone (its grace over, re-attached and closed)
// is left.
func terminalCloser(c *agentconn.Client, scope, termID string) func() {
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if t, err := c.AttachTerminal(ctx, scope, termID, 0); err == nil {
			_ = t.Close()
		}
	}
}

// termSession joins a WebSocket and an agent terminal.
type termSession struct {
	a    *API
	conn *websocket.Conn
	term *agentconn.TerminalStream
	// ctx is the session's: it ends with the session, or at once when the
	// caller's credential is revoked (errStreamCut).
	ctx context.Context
	// hold is the session's place in live, kept until the terminal is
	// closed or parked.
	hold *liveHold
	// closeDetached closes the terminal once its call has ended.
	closeDetached func()
	// cutDone is closed when cut has ended the agent call; detached is
	// set when it left the terminal running.
	cutDone  chan struct{}
	detached bool
	// closing is set when the client asked to end the terminal.
	closing atomic.Bool
	// started is set once the client knows the terminal's id.
	started bool
}

// cutting reports whether the session's end must close the terminal
// rather than leave it to the agent's grace: its caller's credential
// ended (errStreamCut), or its client closed it.
func (s *termSession) cutting() bool {
	return errors.Is(context.Cause(s.ctx), errStreamCut) || s.closing.Load()
}

// cut ends the agent call when the session's context ends, which also
// ends a Read of the terminal: a cut for revocation closes the terminal
// (the agent kills it and forgets it at once), as does a session whose
// client closed it; any other end detaches it, for end to park.
func (s *termSession) cut() {
	defer close(s.cutDone)
	terminalHook("cut", s.term.TerminalID())
	if s.cutting() {
		_ = s.term.Close()
		return
	}
	s.term.Detach()
	s.detached = true
}

// end ends the session once its cut, when its context ended (stopCut
// reports false), has ended the agent call. The terminal is closed once
// it has exited, was never shown to the client, or cutting says so;
// otherwise it is left to the agent's grace, to be re-attached, and
// parked in live: unless the caller's credential ended in the meantime,
// which closes it (liveHold.park).
func (s *termSession) end(stopCut func() bool) {
	terminalHook("end", s.term.TerminalID())
	if !stopCut() {
		<-s.cutDone
	}
	_, exited := s.term.Exit()
	if exited || !s.started || s.cutting() {
		// A terminal cut detached before its client closed it is
		// closed over a call of its own.
		if s.detached && !exited {
			s.closeDetached()
			return
		}
		_ = s.term.Close()
		return
	}
	s.term.Detach()
	terminalHook("park", s.term.TerminalID())
	if !s.hold.park(s.term.TerminalID(), s.a.now(), s.closeDetached) {
		s.closeDetached()
	}
}

// terminalHooked, set only by tests (export_test.go), is called as a
// terminal's request is about to register in live ("open", no id yet)
// or its session reaches a point of its end ("cut", "end", "park"), with
// the terminal's id, for a test to order a race.
var terminalHooked atomic.Pointer[func(point, termID string)]

// terminalHook calls the test's terminalHooked, if any.
func terminalHook(point, termID string) {
	if h := terminalHooked.Load(); h != nil {
		(*h)(point, termID)
	}
}

// run joins the WebSocket and the terminal until either side ends; the
// first to end ends ctx, which ends the other.
func (s *termSession) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		defer s.hold.stop()
		s.output(ctx)
	})
	wg.Go(func() {
		defer s.hold.stop()
		s.input(ctx)
	})
	wg.Wait()
}

func (s *termSession) control(ctx context.Context, m client.TerminalMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.conn.Write(ctx, websocket.MessageText, b)
}

// output copies the terminal's output to the client until the terminal's
// process exits (exit message, normal closure) or the link breaks.
func (s *termSession) output(ctx context.Context) {
	buf := make([]byte, 32<<10)
	for {
		n, err := s.term.Read(buf)
		if n > 0 {
			if s.conn.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
				return
			}
		}
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			st, _ := s.term.Exit()
			if s.control(ctx, client.TerminalMessage{Type: client.TerminalExit, Exit: exitOut(st)}) == nil {
				_ = s.conn.Close(websocket.StatusNormalClosure, "exited")
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		body := client.Error{Code: "internal", Message: "internal error; the server logged the details under this request id", RequestID: requestIDFrom(ctx)}
		if pe, ok := errdefs.Public(err); ok {
			body.Code, body.Message = pe.Code, pe.Message
		}
		s.a.logger.InfoContext(ctx, "terminal failed", "err", err)
		if s.control(ctx, client.TerminalMessage{Type: client.TerminalError, Error: &body}) == nil {
			_ = s.conn.Close(websocket.StatusInternalError, body.Code)
		}
		return
	}
}

// input copies the client's bytes and control messages to the terminal
// until the client goes away or the session ends (output cancels ctx).
func (s *termSession) input(ctx context.Context) {
	for {
		typ, data, err := s.conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				s.closing.Store(true)
			}
			return
		}
		if typ == websocket.MessageBinary {
			// Input to a terminal that has just ended goes nowhere; the
			// output side reports the end.
			_, _ = s.term.Write(data)
			continue
		}
		var m client.TerminalMessage
		if err := json.Unmarshal(data, &m); err != nil {
			_ = s.conn.Close(websocket.StatusUnsupportedData, "control messages are JSON")
			return
		}
		switch m.Type {
		case client.TerminalClose:
			// The agent kills the process; output reports its exit.
			s.closing.Store(true)
			err = s.term.Kill()
		case client.TerminalResize:
			err = s.term.Resize(m.Rows, m.Cols)
		case client.TerminalSignal:
			sig, serr := parseSignal(m.Signal)
			if serr != nil {
				err = serr
				break
			}
			err = s.term.Signal(sig)
		default:
			err = errdefs.InvalidArgument("invalid_message", "unknown control message type %q", m.Type)
		}
		// A bad request is reported and the session goes on; other
		// failures come from a terminal that has ended, which the output
		// side reports.
		if pe, ok := errdefs.Public(err); ok && errors.Is(err, errdefs.ErrInvalidArgument) {
			_ = s.control(ctx, client.TerminalMessage{Type: client.TerminalError, Error: &client.Error{Code: pe.Code, Message: pe.Message}})
		}
	}
}
