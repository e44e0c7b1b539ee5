package shim

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
	"github.com/paddockhq/paddock/internal/agentpb/envd/process/processconnect"
)

// envdProcessService serves envd's process.Process (api/envd/process) on
// the agent's own process manager: a process started through it is one of
// the manager's background processes (listed by paddock's List, killed by
// KillAll and at shutdown), which envd's clients name by its OS pid or by
// the tag they gave it. As in envd, it outlives the Start call that
// started it: a client that goes away does not kill it, Connect follows
// it again, and it is forgotten once it has exited.
type envdProcessService struct {
	s *Server

	mu    sync.Mutex
	byPid map[uint32]*envdProcess
}

var _ processconnect.ProcessHandler = (*envdProcessService)(nil)

// envdProcess is a process started through envd's Start, with what its
// client asked for (envd's List answers it back).
type envdProcess struct {
	p      *process
	config *procpb.ProcessConfig
	tag    *string
}

// registerEnvdProcess serves envd's process.Process.
func (s *Server) registerEnvdProcess(hopts []connect.HandlerOption) {
	h := &envdProcessService{s: s, byPid: make(map[uint32]*envdProcess)}
	s.mux.Handle(processconnect.NewProcessHandler(h, hopts...))
}

// add registers a started process.
func (h *envdProcessService) add(ep *envdProcess) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pruneLocked()
	h.byPid[uint32(ep.p.pid)] = ep
}

// pruneLocked forgets the processes that are done: envd knows only the
// ones that run, or whose last output is still being collected. h.mu is
// held.
func (h *envdProcessService) pruneLocked() {
	for pid, ep := range h.byPid {
		ep.p.mu.Lock()
		done := ep.p.done
		ep.p.mu.Unlock()
		if done {
			delete(h.byPid, pid)
		}
	}
}

// get returns the process sel names; not_found once it is done.
func (h *envdProcessService) get(sel *procpb.ProcessSelector) (*envdProcess, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pruneLocked()
	switch s := sel.GetSelector().(type) {
	case *procpb.ProcessSelector_Pid:
		if ep, ok := h.byPid[s.Pid]; ok {
			return ep, nil
		}
		return nil, errNotFound("process_not_found", "", "process with pid %d not found", s.Pid)
	case *procpb.ProcessSelector_Tag:
		var found *envdProcess
		for _, ep := range h.byPid {
			if ep.tag != nil && *ep.tag == s.Tag && (found == nil || ep.p.pid < found.p.pid) {
				found = ep
			}
		}
		if found == nil {
			return nil, errNotFound("process_not_found", s.Tag, "process with tag %s not found", s.Tag)
		}
		return found, nil
	}
	return nil, &rpcError{kind: kindUnimplemented, reason: "invalid_selector", msg: "the process selector names neither a pid nor a tag"}
}

func (h *envdProcessService) Start(ctx context.Context, req *connect.Request[procpb.StartRequest], stream *connect.ServerStream[procpb.StartResponse]) error {
	spec, err := h.s.envdSpec(req.Msg, req.Header())
	if err != nil {
		return err
	}
	p, err := h.s.procs.start(spec, startTimeout(ctx))
	if err != nil {
		return err
	}
	// The process outlives the call: its end only lets the process's
	// output go on without waiting for this follower.
	defer h.s.procs.release(p)
	h.add(&envdProcess{p: p, config: proto.CloneOf(req.Msg.GetProcess()), tag: req.Msg.Tag})
	send := func(ev *procpb.ProcessEvent) error { return stream.Send(&procpb.StartResponse{Event: ev}) }
	return h.s.followEnvd(ctx, p, req.Header().Get(keepaliveHeader), [2]int64{}, true, send)
}

func (h *envdProcessService) Connect(ctx context.Context, req *connect.Request[procpb.ConnectRequest], stream *connect.ServerStream[procpb.ConnectResponse]) error {
	ep, err := h.get(req.Msg.GetProcess())
	if err != nil {
		return err
	}
	// As envd, a new follower gets the output from now on, not what
	// came before.
	var offs [2]int64
	ep.p.mu.Lock()
	for i, r := range ep.p.out {
		if r != nil {
			offs[i] = r.end
		}
	}
	ep.p.mu.Unlock()
	send := func(ev *procpb.ProcessEvent) error { return stream.Send(&procpb.ConnectResponse{Event: ev}) }
	return h.s.followEnvd(ctx, ep.p, req.Header().Get(keepaliveHeader), offs, false, send)
}

func (h *envdProcessService) List(ctx context.Context, req *connect.Request[procpb.ListRequest]) (*connect.Response[procpb.ListResponse], error) {
	h.mu.Lock()
	eps := make([]*envdProcess, 0, len(h.byPid))
	for _, ep := range h.byPid {
		ep.p.mu.Lock()
		if !ep.p.exited {
			eps = append(eps, ep)
		}
		ep.p.mu.Unlock()
	}
	h.mu.Unlock()
	slices.SortFunc(eps, func(a, b *envdProcess) int { return a.p.pid - b.p.pid })
	out := &procpb.ListResponse{Processes: make([]*procpb.ProcessInfo, 0, len(eps))}
	for _, ep := range eps {
		out.Processes = append(out.Processes, &procpb.ProcessInfo{Config: ep.config, Pid: uint32(ep.p.pid), Tag: ep.tag})
	}
	return connect.NewResponse(out), nil
}

// followEnvd streams p's events as envd does: the start event with its
// pid, its output from offs on as data events, and its end; keepalive
// events whenever nothing else was sent for the interval the client's
// Keepalive-Ping-Interval header asks. owner marks the Start call's
// follower, whose pace the process's output waits for.
func (s *Server) followEnvd(ctx context.Context, p *process, keepalive string, offs [2]int64, owner bool, send func(*procpb.ProcessEvent) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	es := &envdEvents{send: send, pty: p.spec.pty != nil, clock: s.procs.clock, every: keepaliveInterval(keepalive), cancel: cancel}
	defer es.stop()
	if err := es.event(&procpb.ProcessEvent{Event: &procpb.ProcessEvent_Start{
		Start: &procpb.ProcessEvent_StartEvent{Pid: uint32(p.pid)},
	}}); err != nil {
		return err
	}
	err := p.follow(ctx, s.quit, offs, true, owner, es)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// envdEvents sends a process's events to an envd client, and keepalives
// between them; it is a process's eventSink.
type envdEvents struct {
	send   func(*procpb.ProcessEvent) error
	pty    bool
	clock  Clock
	every  time.Duration
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	timer   Timer
	stopped bool
}

var _ eventSink = (*envdEvents)(nil)

// event sends ev and restarts the keepalive interval.
func (e *envdEvents) event(ev *procpb.ProcessEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sendLocked(ev)
}

// sendLocked sends ev and restarts the keepalive interval; e.mu is held.
func (e *envdEvents) sendLocked(ev *procpb.ProcessEvent) error {
	if e.timer != nil {
		e.timer.Stop()
	}
	if err := e.send(ev); err != nil {
		return err
	}
	if !e.stopped {
		e.timer = e.clock.AfterFunc(e.every, e.keepalive)
	}
	return nil
}

// keepalive sends a keepalive event unless the call is over; a failure
// ends the call.
func (e *envdEvents) keepalive() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	if err := e.sendLocked(&procpb.ProcessEvent{Event: &procpb.ProcessEvent_Keepalive{Keepalive: &procpb.ProcessEvent_KeepAlive{}}}); err != nil {
		e.cancel(err)
	}
}

// stop ends the keepalives.
func (e *envdEvents) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	if e.timer != nil {
		e.timer.Stop()
	}
}

func (e *envdEvents) output(o *agentpb.Output) error {
	d := &procpb.ProcessEvent_DataEvent{}
	switch {
	case e.pty:
		d.Output = &procpb.ProcessEvent_DataEvent_Pty{Pty: o.Data}
	case o.Stream == agentpb.OutputStream_OUTPUT_STREAM_STDERR:
		d.Output = &procpb.ProcessEvent_DataEvent_Stderr{Stderr: o.Data}
	default:
		d.Output = &procpb.ProcessEvent_DataEvent_Stdout{Stdout: o.Data}
	}
	return e.event(&procpb.ProcessEvent{Event: &procpb.ProcessEvent_Data{Data: d}})
}

// lost skips output the process's buffer no longer holds: envd's events
// have no way to say so.
func (e *envdEvents) lost(*agentpb.OutputLost) error { return nil }

func (e *envdEvents) exited(x *agentpb.Exited) error {
	return e.event(&procpb.ProcessEvent{Event: &procpb.ProcessEvent_End{End: endEvent(x)}})
}

// endEvent describes an exit as envd does, in the words of Go's
// os.ProcessState: "exit status 2", "signal: killed"; error is set unless
// the process exited with 0.
func endEvent(x *agentpb.Exited) *procpb.ProcessEvent_EndEvent {
	end := &procpb.ProcessEvent_EndEvent{ExitCode: x.ExitCode, Exited: x.Signal == 0}
	if end.Exited {
		end.Status = "exit status " + strconv.Itoa(int(x.ExitCode))
	} else {
		end.ExitCode = -1
		end.Status = "signal: " + syscall.Signal(x.Signal).String()
	}
	if !end.Exited || end.ExitCode != 0 {
		end.Error = proto.String(end.Status)
	}
	return end
}
