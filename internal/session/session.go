// Package session runs agent harnesses (Claude Code, Codex, OpenCode,
// Gemini, Kimi) inside a runtime's sandbox for prompts and tasks, and keeps
// the conversations: a session belongs to the runtime, never to a
// sandbox, and its transcript is the harness's stream parsed into one
// event schema. The next prompt of a session resumes the harness's own
// conversation, whose state the harness keeps in the workspace (HOME), so
// it survives pause, resume, archive and a new sandbox after a reset.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Public error codes.
const (
	CodeUnknownHarness  = "unknown_harness"
	CodeSecretMissing   = "harness_secret_missing"
	CodeSessionNotFound = "session_not_found"
	CodeSessionBusy     = "session_busy"
	CodeHarnessMismatch = "session_harness_mismatch"
	CodeInvalidPrompt   = "invalid_prompt"
	CodeNotInstalled    = "harness_not_installed"
)

// Bounds of a turn.
const (
	DefaultTimeout = 30 * time.Minute
	MaxTimeout     = 6 * time.Hour
	MaxPromptBytes = 256 << 10
	workdir        = "/workspace"
	stderrTail     = 8 << 10
	maxLine        = 8 << 20 // one event line of a harness's stream
)

// SecretEnvs names the environment variables a sandbox of the runtime
// gets its secrets as (see Config.Secrets).
type SecretEnvs interface {
	// Resolve resolves secret references (ids or names) of a workspace.
	Resolve(ctx context.Context, orgID, workspaceID string, refs []string) ([]store.Secret, error)
}

// Store is what the service uses of the store: sessions and their
// events, the sandbox a turn runs in, its secrets and its egress log.
type Store interface {
	store.SessionQueries
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
	GetSecret(ctx context.Context, id string) (store.Secret, error)
	egressLog
}

// Config configures a Service.
type Config struct {
	Store    Store
	Runtimes *runtime.Service
	Bindings *binding.Service // nil: no capabilities to wait for
	Secrets  SecretEnvs       // nil: no secrets, so no harness has its own
	Logger   *slog.Logger
	Now      func() time.Time
	// DefaultHarness is used when neither a request nor its session
	// names one; "" is harness.Default.
	DefaultHarness string
	// EgressPoll is how often a turn in a proxy sandbox reads the egress
	// log for refusals of its model's host; 0 is one second.
	EgressPoll time.Duration
	// EgressRecorded waits until the egress log holds every decision the
	// proxy made before t; nil: no proxy, or nothing to wait for.
	EgressRecorded func(ctx context.Context, t time.Time) error
}

// Service runs prompts and tasks.
type Service struct {
	store    Store
	runtimes *runtime.Service
	bindings *binding.Service
	secrets  SecretEnvs
	logger   *slog.Logger
	now      func() time.Time
	def      string
	// egressPoll and egressRecorded: see Config.
	egressPoll     time.Duration
	egressRecorded func(ctx context.Context, t time.Time) error

	mu   sync.Mutex
	busy map[string]bool // sessions with a turn running
}

// New returns a Service.
func New(cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	def := cfg.DefaultHarness
	if def == "" {
		def = harness.Default
	}
	poll := cfg.EgressPoll
	if poll <= 0 {
		poll = defaultEgressPoll
	}
	return &Service{
		store: cfg.Store, runtimes: cfg.Runtimes, bindings: cfg.Bindings, secrets: cfg.Secrets, logger: logger,
		now: func() time.Time { return now().UTC().Truncate(time.Microsecond) }, def: def, busy: map[string]bool{},
		egressPoll: poll, egressRecorded: cfg.EgressRecorded,
	}
}

// DefaultHarness is the harness used when none is named.
func (s *Service) DefaultHarness() string { return s.def }

// Turn is one prompt or task: what to run and where.
type Turn struct {
	Kind    string // KindPrompt or KindTask
	Request Request
	// Started, when set, is told the turn's session before its first
	// event (a streamed answer names it in a header).
	Started func(store.Session)
}

// Outcome is what a turn left.
type Outcome struct {
	Session store.Session
	Result  string
	Error   string
	Usage   *harness.TurnUsage
	Events  []harness.Event
}

// Run runs one turn of a harness in the runtime's sandbox (woken if
// paused or archived), streaming each event to emit as it is parsed, and
// records it in the session's transcript. Errors before the harness runs
// (an unknown harness or session, a missing model credential, a runtime
// that cannot run it) are returned and nothing is recorded; once it runs,
// a failure is a turn that ends with error and done events.
func (s *Service) Run(ctx context.Context, rt store.Runtime, t Turn, emit func(harness.Event) error) (Outcome, error) {
	req := t.Request
	timeout, err := turnTimeout(req)
	if err != nil {
		return Outcome{}, err
	}
	sess, h, err := s.sessionAndHarness(ctx, rt, req)
	if err != nil {
		return Outcome{}, err
	}
	req = s.withRuntimeModel(rt, h, req)
	// Before anything wakes or runs: the model credential.
	if err := s.checkSecret(ctx, rt, h); err != nil {
		return Outcome{}, err
	}
	release := func() {}
	if sess.ID != "" {
		var ok bool
		if release, ok = s.hold(sess.ID); !ok {
			return Outcome{}, errdefs.Conflict(CodeSessionBusy, "session %s is running a turn; wait for it to end", sess.ID)
		}
		defer release()
		// Read again now that it is ours: a turn that ended meanwhile
		// moved its counts.
		if sess, err = s.store.GetSession(ctx, sess.ID); err != nil {
			return Outcome{}, err
		}
	}
	c, rt, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return Outcome{}, err
	}
	if err := installed(ctx, c, h); err != nil {
		return Outcome{}, err
	}
	var servers []capability.ResolvedMCPServer
	if s.bindings != nil {
		if err := s.bindings.Wait(ctx, rt.ID); err != nil {
			return Outcome{}, err
		}
		if servers, err = s.bindings.MCPServers(ctx, rt); err != nil {
			return Outcome{}, err
		}
	}
	// The turn belongs to the server once it begins: a client that goes
	// away stops reading, not the agent (its timeout still bounds it, and
	// a server shutting down closes its agent link). The runtime stays
	// active while it runs.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+time.Minute)
	defer cancel()
	if c, rt, err = s.runtimes.AgentOf(ctx, rt); err != nil {
		return Outcome{}, err
	}
	now := s.now()
	if sess.ID == "" {
		sess = store.Session{
			ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID, Kind: t.Kind,
			Harness: h.Name, Status: StatusRunning, Title: title(req.Prompt), CreatedAt: now, UpdatedAt: now,
		}
		if err := s.store.CreateSession(ctx, sess); err != nil {
			return Outcome{}, err
		}
		release, _ = s.hold(sess.ID)
		defer release()
	}
	if t.Started != nil {
		t.Started(sess)
	}
	rec := &recorder{s: s, sess: &sess, turn: sess.Turns + 1, emit: emit}
	s.turn(ctx, c, h, rec, req, servers, timeout, s.modelWatch(ctx, rt, h, req.Model))
	return s.end(ctx, rec, release)
}

// withRuntimeModel is req with the runtime's model when it names none
// and the turn runs the harness that model is for: the runtime's (the
// default one, when the runtime names none). The model is the runtime's
// setting, a prompt's only overrides it; another harness's turn (named
// by the prompt or its session) keeps that harness's own default.
func (s *Service) withRuntimeModel(rt store.Runtime, h *harness.Harness, req Request) Request {
	own := rt.Config.Harness
	if own == "" {
		own = s.def
	}
	if req.Model == "" && h.Name == own {
		req.Model = rt.Config.Model
	}
	return req
}

// turnTimeout checks req's prompt and returns the turn's timeout.
func turnTimeout(req Request) (time.Duration, error) {
	if strings.TrimSpace(req.Prompt) == "" || len(req.Prompt) > MaxPromptBytes || !utf8.ValidString(req.Prompt) {
		return 0, errdefs.InvalidArgument(CodeInvalidPrompt, "prompt must be non-empty UTF-8 text of at most %d bytes", MaxPromptBytes)
	}
	if req.TimeoutSeconds == 0 {
		return DefaultTimeout, nil
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > int64(MaxTimeout/time.Second) {
		return 0, errdefs.InvalidArgument("invalid_timeout", "timeout_seconds must be between 1 and %d", int64(MaxTimeout/time.Second))
	}
	return time.Duration(req.TimeoutSeconds) * time.Second, nil
}

// sessionAndHarness finds the session req continues (none: a zero
// session) and the harness the turn runs: the one req names, else the
// session's, else the runtime's, else the default.
func (s *Service) sessionAndHarness(ctx context.Context, rt store.Runtime, req Request) (store.Session, *harness.Harness, error) {
	var sess store.Session
	if req.SessionID != "" {
		var err error
		sess, err = s.store.GetSession(ctx, req.SessionID)
		if err != nil || sess.RuntimeID != rt.ID {
			return sess, nil, errdefs.NotFound(CodeSessionNotFound, "session %s not found on runtime %s", req.SessionID, rt.ID)
		}
		if req.Harness != "" && req.Harness != sess.Harness {
			return sess, nil, errdefs.InvalidArgument(CodeHarnessMismatch, "session %s runs %s, not %s; start a new session for another harness", sess.ID, sess.Harness, req.Harness)
		}
	}
	name := req.Harness
	if name == "" {
		name = sess.Harness
	}
	if name == "" {
		name = rt.Config.Harness
	}
	if name == "" {
		name = s.def
	}
	h, ok := harness.Lookup(name)
	if !ok {
		return sess, nil, errdefs.InvalidArgument(CodeUnknownHarness, "unknown harness %q; GET /api/capabilities lists them (%s)", name, strings.Join(harnessNames(), ", "))
	}
	return sess, h, nil
}

// modelWatch returns what the turn of h with model in rt's current sandbox
// watches in the egress log: the endpoint of the credential the CLI uses,
// if the sandbox runs in proxy mode (nil: nothing to watch).
func (s *Service) modelWatch(ctx context.Context, rt store.Runtime, h *harness.Harness, model string) *modelWatch {
	sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
	if err != nil {
		return nil
	}
	envs, err := s.secretEnvs(ctx, rt)
	if err != nil {
		return nil
	}
	e, ok := h.Endpoint(model, envs)
	if !ok {
		return nil
	}
	w, _ := modelWatchOf(rt, sb, e, s.now())
	return w
}

// turn runs the harness and keeps what it says in rec, up to its done
// event, which rec holds back for end.
func (s *Service) turn(ctx context.Context, c *agentconn.Client, h *harness.Harness, rec *recorder, req Request,
	servers []capability.ResolvedMCPServer, timeout time.Duration, watch *modelWatch) {
	sess := rec.sess
	sess.Status, sess.Turns = StatusRunning, sess.Turns+1

	inv := harness.Invocation{
		Prompt: req.Prompt, ResumeID: sess.HarnessSessionID, Model: req.Model,
		Workdir: workdir, CapRoot: capability.Root, HasMCP: hasFile(ctx, c, capability.Root+"/mcp.json"),
		MCPServers: servers,
	}
	// The agent puts the capabilities' tools on the harness's PATH, after
	// the image's own commands, as for every process.
	argv, env := h.Command(inv)
	rec.add(ctx, harness.Event{Type: harness.EventMessage, Role: "user", Text: req.Prompt})
	parser := h.NewParser()
	exitCode := -1
	var stderr tailBuffer
	// The harness runs until it exits, or until the egress log shows its
	// model cannot be reached: then the call ends and the agent kills it.
	execCtx, stopExec := context.WithCancel(ctx)
	defer stopExec()
	unreachable := s.watch(execCtx, watch, stopExec)
	es, err := c.Exec(execCtx, agentconn.ExecRequest{Argv: argv, Env: env, Cwd: workdir, Timeout: timeout})
	if err != nil {
		stderr.Write([]byte(publicText(err)))
	} else {
		exitCode = s.pump(ctx, es, parser, rec, &stderr)
	}
	stopExec()
	rec.finishing = true
	turnErr := unreachable()
	// The watch stopped the harness: its own account of being killed says
	// less than the refusal.
	killed := turnErr != nil
	if turnErr == nil && watch != nil && exitCode != 0 {
		// A CLI that gives up at once (OpenCode on a refused tunnel) may
		// exit before the refusal is read.
		turnErr = s.refusedAtEnd(ctx, watch)
	}
	for _, e := range closing(parser.Finish(exitCode, stderr.String()), turnErr, killed) {
		rec.add(ctx, e)
	}
	if id := parser.HarnessSessionID(); id != "" {
		sess.HarnessSessionID = id
	}
}

// end records how rec's turn came out in its session, lets the session
// go (release), and only then streams the turn's done event: a client
// that sends the next prompt the moment it reads done finds the session
// recorded and free, not busy with the turn it saw end.
func (s *Service) end(ctx context.Context, rec *recorder, release func()) (Outcome, error) {
	sess := *rec.sess
	out := Outcome{Events: rec.events, Result: rec.result, Error: rec.errMsg, Usage: rec.usage}
	sess.Status = StatusCompleted
	if rec.failed || out.Error != "" {
		sess.Status = StatusFailed
	}
	sess.UpdatedAt = s.now()
	// The turn's record outlives a client that went away.
	if err := s.store.UpdateSession(context.WithoutCancel(ctx), sess); err != nil {
		return out, err
	}
	out.Session = sess
	release()
	if rec.done != nil && !rec.gone {
		rec.emit(*rec.done)
	}
	return out, nil
}

// closing returns the events that end a turn: the parser's, and the
// refusal of the model endpoint, if there was one, as the turn's error
// (the last one, before the done event). The CLI's own errors stay in the
// transcript, unless the watch stopped it (killed): then its account of
// being killed says less than the refusal.
func closing(finish []harness.Event, refusal *harness.TurnError, killed bool) []harness.Event {
	var out []harness.Event
	for _, e := range finish {
		if killed && e.Type == harness.EventError {
			continue
		}
		if refusal != nil && e.Type == harness.EventDone {
			out = append(out, harness.Event{Type: harness.EventError, Error: refusal})
			refusal = nil
		}
		out = append(out, e)
	}
	if refusal != nil {
		out = append(out, harness.Event{Type: harness.EventError, Error: refusal})
	}
	return out
}

// pump reads the harness's output until it exits: stdout line by line
// through the parser, stderr kept for the end. It returns the exit code,
// or -1 when the link broke first.
func (s *Service) pump(ctx context.Context, es *agentconn.ExecStream, parser harness.Parser, rec *recorder, stderr *tailBuffer) int {
	defer es.Close()
	var line []byte
	for {
		ev, err := es.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				stderr.Write([]byte("\n" + publicText(err)))
			}
			return -1
		}
		if ev.Exit != nil {
			if len(line) > 0 {
				for _, e := range parser.Feed(line) {
					rec.add(ctx, e)
				}
			}
			if ev.Exit.TimedOut {
				stderr.Write([]byte("\nthe turn timed out"))
			}
			return ev.Exit.Code
		}
		if ev.Stream == agentconn.Stderr {
			stderr.Write(ev.Data)
			continue
		}
		data := ev.Data
		for len(data) > 0 {
			i := slices.Index(data, '\n')
			if i < 0 {
				if len(line)+len(data) <= maxLine {
					line = append(line, data...)
				}
				break
			}
			if len(line)+i <= maxLine {
				line = append(line, data[:i]...)
			}
			for _, e := range parser.Feed(line) {
				rec.add(ctx, e)
			}
			line, data = line[:0], data[i+1:]
		}
	}
}

// recorder numbers a turn's events, keeps them in the transcript and
// streams them.
type recorder struct {
	s    *Service
	sess *store.Session
	turn int
	emit func(harness.Event) error
	// events are the turn's, kept for an answer that is not streamed.
	events []harness.Event
	gone   bool // the client stopped reading; the transcript goes on
	n      int  // events of this turn
	bytes  int  // and their texts' sizes
	// truncated: past the bounds, only what ends the turn is kept;
	// finishing: the parser's last events (error, done) are being added.
	truncated, finishing bool
	// done is the streamed turn's done event, kept back until the
	// session is recorded (Service.end).
	done *harness.Event
	// What the turn came to.
	result, errMsg string
	usage          *harness.TurnUsage
	failed         bool
}

// Bounds of what one turn records: a harness's output is the sandbox's
// to choose.
const (
	maxTurnEvents = 10000
	maxTurnBytes  = 16 << 20
	maxEventText  = 64 << 10
)

// codeTruncated marks the event that says a turn's transcript was cut.
const codeTruncated = "transcript_truncated"

// size is what an event's texts weigh.
func size(e harness.Event) int {
	n := len(e.Text)
	if e.Tool != nil {
		n += len(e.Tool.Input)
	}
	if e.Result != nil {
		n += len(e.Result.Output)
	}
	return n
}

func (r *recorder) add(ctx context.Context, e harness.Event) {
	bound(&e)
	if !r.finishing {
		r.n++
		r.bytes += size(e)
		if r.n > maxTurnEvents || r.bytes > maxTurnBytes {
			if r.truncated {
				return
			}
			r.truncated = true
			// A note, not a failure: the turn goes on, unrecorded.
			e = harness.Event{Type: harness.EventError, Error: &harness.TurnError{Code: codeTruncated,
				Message: fmt.Sprintf("the turn's output passed %d events or %d MiB; the rest of it is not kept", maxTurnEvents, maxTurnBytes>>20)}}
		}
	}
	switch {
	case e.Type == harness.EventError && e.Error != nil && e.Error.Code != codeTruncated:
		r.errMsg = e.Error.Message
	case e.Type == harness.EventUsage && e.Usage != nil:
		r.usage = e.Usage
	case e.Type == harness.EventMessage && e.Role == "assistant":
		r.result = e.Text
	case e.Type == harness.EventDone && e.Done != nil:
		if e.Done.Result != "" {
			r.result = e.Done.Result
		}
		r.failed = r.failed || e.Done.ExitCode != 0
	}
	r.sess.Events++
	e.Seq, e.Turn, e.Time = r.sess.Events, r.turn, r.s.now()
	if r.emit == nil {
		r.events = append(r.events, e)
	}
	body, err := encodeEvent(e)
	if err == nil {
		err = r.s.store.AppendSessionEvents(context.WithoutCancel(ctx), []store.SessionEvent{{
			SessionID: r.sess.ID, Seq: e.Seq, Turn: e.Turn, Type: e.Type, At: e.Time, Body: body,
		}})
	}
	if err != nil {
		r.s.logger.Warn("recording a session event", "session", r.sess.ID, "err", err)
	}
	switch {
	case r.emit == nil || r.gone:
	case r.finishing && e.Type == harness.EventDone:
		r.done = &e
	default:
		r.gone = r.emit(e) != nil
	}
}

// bound cuts an event's text, tool input and tool output to maxEventText.
func bound(e *harness.Event) {
	e.Text = cut(e.Text)
	if e.Result != nil {
		e.Result.Output = cut(e.Result.Output)
	}
	if e.Tool != nil && len(e.Tool.Input) > maxEventText {
		in, _ := json.Marshal(cut(string(e.Tool.Input)))
		e.Tool.Input = in
	}
	if e.Error != nil {
		e.Error.Message = cut(e.Error.Message)
	}
	if e.Done != nil {
		e.Done.Result = cut(e.Done.Result)
	}
}

func cut(s string) string {
	if len(s) <= maxEventText {
		return s
	}
	n := maxEventText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n[… cut: the text was " + strconv.Itoa(len(s)) + " bytes]"
}

// checkSecret refuses a turn whose harness has no model credential in the
// sandbox it would run in: the secrets the current sandbox was started
// with, or, without one, those the runtime binds (what a start injects).
func (s *Service) checkSecret(ctx context.Context, rt store.Runtime, h *harness.Harness) error {
	if len(h.Secrets) == 0 {
		return nil
	}
	envs, err := s.secretEnvs(ctx, rt)
	if err != nil {
		return err
	}
	for _, want := range h.Secrets {
		if slices.Contains(envs, want) {
			return nil
		}
	}
	unread := ""
	for _, e := range h.Unread {
		if slices.Contains(envs, e) {
			unread = fmt.Sprintf(" (it has %s, which %s %s does not read: inject the same key as %s)", e, h.Binary, h.WrittenAgainst, h.Secrets[0])
			break
		}
	}
	return errdefs.FailedPrecondition(CodeSecretMissing,
		"harness %s needs a model credential in %s, and runtime %s has no secret injected as %s%s: create one (paddock secret create NAME --env %s) and bind it (paddock runtime set %s --secret NAME), or start the runtime with it",
		h.Name, strings.Join(h.Secrets, " or "), rt.ID, h.Secrets[0], unread, h.Secrets[0], rt.ID)
}

// secretEnvs names the variables the runtime's sandbox gets secrets as.
func (s *Service) secretEnvs(ctx context.Context, rt store.Runtime) ([]string, error) {
	var out []string
	if rt.CurrentSandboxID != "" {
		sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
		if err == nil && sb.State != store.SandboxKilled {
			for _, id := range sb.SecretIDs {
				if sec, err := s.store.GetSecret(ctx, id); err == nil {
					out = append(out, sec.Env)
				}
			}
			return out, nil
		}
	}
	if s.secrets == nil || len(rt.Config.Secrets) == 0 {
		return nil, nil
	}
	found, err := s.secrets.Resolve(ctx, rt.OrgID, rt.WorkspaceID, rt.Config.Secrets)
	if err != nil {
		return nil, err
	}
	for _, sec := range found {
		out = append(out, sec.Env)
	}
	return out, nil
}

func (s *Service) claim(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[id] {
		return false
	}
	s.busy[id] = true
	return true
}

func (s *Service) release(id string) {
	s.mu.Lock()
	delete(s.busy, id)
	s.mu.Unlock()
}

// hold claims session id for a turn. Its release may be called more than
// once: only the first lets the session go, never a later turn's claim.
func (s *Service) hold(id string) (release func(), ok bool) {
	if !s.claim(id) {
		return func() {}, false
	}
	return sync.OnceFunc(func() { s.release(id) }), true
}

// Transcript returns a session's events in order.
func (s *Service) Transcript(ctx context.Context, sess store.Session) ([]harness.Event, error) {
	rows, err := s.store.ListSessionEvents(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	out := make([]harness.Event, 0, len(rows))
	for _, r := range rows {
		e, err := decodeEvent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func harnessNames() []string {
	var out []string
	for _, h := range harness.All() {
		out = append(out, h.Name)
	}
	return out
}

// installed refuses a harness whose CLI the sandbox's image lacks.
func installed(ctx context.Context, c *agentconn.Client, h *harness.Harness) error {
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"/bin/sh", "-c", `command -v "$0"`, h.Binary}, Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	if res.Exit.Code != 0 {
		return errdefs.FailedPrecondition(CodeNotInstalled,
			"the %s CLI (%s) is not installed in this runtime's image; give the runtime capabilities_json [\"all_harness\"] or an image that has it", h.Name, h.Binary)
	}
	return nil
}

func hasFile(ctx context.Context, c *agentconn.Client, path string) bool {
	_, err := c.Stat(ctx, path)
	return err == nil
}

// title is the start of a session's first prompt.
func title(prompt string) string {
	t := strings.Join(strings.Fields(prompt), " ")
	if len(t) <= 80 {
		return t
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut] + "…"
}

// publicText is what a client may see of err.
func publicText(err error) string { return errdefs.PublicMessage(err, "the sandbox's agent failed") }

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > stderrTail {
		t.b = t.b[len(t.b)-stderrTail:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.ToValidUTF8(string(t.b), "\uFFFD") }
