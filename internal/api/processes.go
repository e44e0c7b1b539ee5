package api

import (
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

// processIDRE is the shape of an agent's process id ("p-12").
var processIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// signalNames are the signals a client may send, by name without "SIG".
var signalNames = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
	"TERM": syscall.SIGTERM, "CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP,
	"TSTP": syscall.SIGTSTP, "WINCH": syscall.SIGWINCH,
}

// parseSignal reads a signal name: "TERM", "SIGTERM" or "sigterm".
func parseSignal(name string) (syscall.Signal, error) {
	sig, ok := signalNames[strings.TrimPrefix(strings.ToUpper(name), "SIG")]
	if !ok {
		return 0, errdefs.InvalidArgument("invalid_signal", "signal %q is not one of HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT, STOP, TSTP, WINCH", name)
	}
	return sig, nil
}

// processID reads {process_id}.
func processID(r *http.Request) (string, error) {
	id := r.PathValue("process_id")
	if !processIDRE.MatchString(id) {
		return "", errdefs.InvalidArgument("invalid_process_id", "%q is not a process id", id)
	}
	return id, nil
}

func processOut(p agentconn.ProcessInfo) client.Process {
	out := client.Process{
		ID:          p.ID,
		PID:         p.PID,
		Argv:        p.Argv,
		Cwd:         p.Cwd,
		Background:  p.Background,
		PTY:         p.PTY,
		Running:     p.Running,
		StartedAt:   p.StartedAt.UTC(),
		StdoutBytes: p.Offsets.Stdout,
		StderrBytes: p.Offsets.Stderr,
	}
	if out.Argv == nil {
		out.Argv = []string{}
	}
	if p.Exit != nil {
		out.Exit = exitOut(*p.Exit)
	}
	return out
}

func (a *API) listProcesses(w http.ResponseWriter, r *http.Request) error {
	c, err := a.agentOf(r)
	if err != nil {
		return err
	}
	ps, err := c.Processes(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listOf(ps, "", processOut))
	return nil
}

// killAllProcesses kills every process in the sandbox but the agent.
func (a *API) killAllProcesses(w http.ResponseWriter, r *http.Request) error {
	c, err := a.agentOf(r)
	if err != nil {
		return err
	}
	n, err := c.KillAll(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.KillAllResult{Killed: n})
	return nil
}

// processAgent reads {process_id} and resolves the agent of the runtime.
func (a *API) processAgent(r *http.Request) (string, *agentconn.Client, error) {
	id, err := processID(r)
	if err != nil {
		return "", nil, err
	}
	c, err := a.agentOf(r)
	return id, c, err
}

func (a *API) getProcess(w http.ResponseWriter, r *http.Request) error {
	id, c, err := a.processAgent(r)
	if err != nil {
		return err
	}
	ps, err := c.Processes(r.Context())
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.ID == id {
			writeJSON(w, http.StatusOK, processOut(p))
			return nil
		}
	}
	return errdefs.NotFound("process_not_found", "process %s not found", id)
}

// attachProcess streams a process's output from the given offsets as
// NDJSON events: what the agent still holds is replayed (lost events say
// what it no longer holds), then, unless follow=false, new output until
// the process exits.
func (a *API) attachProcess(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var (
		from agentconn.Offsets
		err  error
	)
	if from.Stdout, err = int64Param(q.Get("stdout_offset"), "stdout_offset"); err != nil {
		return err
	}
	if from.Stderr, err = int64Param(q.Get("stderr_offset"), "stderr_offset"); err != nil {
		return err
	}
	follow, err := boolParam(q.Get("follow"), "follow", true)
	if err != nil {
		return err
	}
	release, err := a.execCaps.acquire(r.Context(), r.PathValue("runtime_id"), identity(r).Principal())
	if err != nil {
		return err
	}
	defer release()
	ctx, end := a.live.open(r.Context(), identity(r), access(r).Org.ID)
	defer end()
	id, c, err := a.processAgent(r)
	if err != nil {
		return err
	}
	attach := c.Attach
	if !follow {
		attach = c.Replay
	}
	es, err := attach(ctx, id, from)
	if err != nil {
		return err
	}
	a.stream(ctx, w, es)
	return nil
}

func (a *API) signalProcess(w http.ResponseWriter, r *http.Request) error {
	var req client.SignalRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	sig, err := parseSignal(req.Signal)
	if err != nil {
		return err
	}
	id, c, err := a.processAgent(r)
	if err != nil {
		return err
	}
	if err := c.Signal(r.Context(), id, sig, req.ProcessOnly); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeStdin streams the request body (application/octet-stream) to a
// process's stdin; close=true closes stdin after it.
func (a *API) writeStdin(w http.ResponseWriter, r *http.Request) error {
	if err := requireType(r, "application/octet-stream"); err != nil {
		return err
	}
	closeStdin, err := boolParam(r.URL.Query().Get("close"), "close", false)
	if err != nil {
		return err
	}
	id, c, err := a.processAgent(r)
	if err != nil {
		return err
	}
	n, err := c.WriteStdin(r.Context(), id, r.Body, closeStdin)
	if err != nil {
		return bodyError(err)
	}
	writeJSON(w, http.StatusOK, client.StdinResult{Bytes: n})
	return nil
}

// requireType accepts a body of media type want, or one with no
// Content-Type.
func requireType(r *http.Request, want string) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != want {
		return &errdefs.Error{Kind: errdefs.ErrInvalidArgument, Code: "unsupported_media_type", Message: "the request body must be " + want}
	}
	return nil
}

// int64Param reads a non-negative integer query parameter; "" is 0.
func int64Param(s, name string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, errdefs.InvalidArgument("invalid_"+name, "%s must be a non-negative integer", name)
	}
	return n, nil
}

// boolParam reads a boolean query parameter; "" is def.
func boolParam(s, name string, def bool) (bool, error) {
	switch s {
	case "":
		return def, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, errdefs.InvalidArgument("invalid_"+name, "%s must be true or false", name)
}
