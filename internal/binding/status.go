package binding

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/store"
)

// statusVersion is the shape of the status a binding row keeps (its "v"):
// the JSON tags of status, Status, StepResult and WorkerStatus. A row
// without "v" was written before the shape had a version, in the same
// shape as version 1. A change to those tags takes a new version, and
// statusOf goes on reading the older ones.
const statusVersion = 1

// status is what a binding records of its last apply, and the binding
// revision it applied.
type status struct {
	V int `json:"v"`
	Status
	Rev int64 `json:"rev"`
}

// statusOf decodes b's status; a binding never applied is pending, and
// so is one whose status this server cannot read (unreadable, or of a
// newer version): its next apply writes it again.
func statusOf(b store.CapabilityBinding) status {
	var st status
	if len(b.Status) == 0 || json.Unmarshal(b.Status, &st) != nil || st.State == "" || st.V > statusVersion {
		return status{Status: Status{State: StatePending,
			Setup: []StepResult{}, Checks: []StepResult{}, Workers: []WorkerStatus{}}}
	}
	return st
}

// encodeStatus is st as a binding row keeps it, at statusVersion.
func encodeStatus(st status) ([]byte, error) {
	st.V = statusVersion
	return json.Marshal(st)
}

// StatusOf is a binding's status as the API shows it for a runtime whose
// current sandbox is sandboxID: one applied to another sandbox (or to an
// older revision of the binding) is pending again, and keeps what
// happened there.
func StatusOf(b store.CapabilityBinding, sandboxID string) Status {
	full := statusOf(b)
	st := full.Status
	if b.Enabled && (st.SandboxID != sandboxID || full.Rev != b.Rev) {
		st.State = StatePending
	}
	if st.SandboxID != sandboxID {
		// Its workers went with that sandbox.
		st.Workers = slices.Clone(st.Workers)
		for i, w := range st.Workers {
			if w.State == WorkerRunning {
				st.Workers[i].State = WorkerStopped
			}
		}
	}
	if st.Setup == nil {
		st.Setup = []StepResult{}
	}
	if st.Checks == nil {
		st.Checks = []StepResult{}
	}
	if st.Workers == nil {
		st.Workers = []WorkerStatus{}
	}
	return st
}

func (s *Service) setStatus(ctx context.Context, b store.CapabilityBinding, st status) {
	data, err := encodeStatus(st)
	if err == nil {
		err = s.store.SetBindingStatus(ctx, b.ID, data, s.now())
	}
	if err != nil {
		s.logger.Warn("recording a binding's status", "binding", b.ID, "err", err)
	}
}

// refreshWorkers brings the workers' states of bs up to date from the
// agent, when the runtime runs the sandbox they were started in: a worker
// that ended is shown exited, with its exit code and the end of its
// output. A runtime not running is not woken for it.
func (s *Service) refreshWorkers(ctx context.Context, rt store.Runtime, bs []store.CapabilityBinding) []store.CapabilityBinding {
	if rt.Status != store.RuntimeRunning || rt.CurrentSandboxID == "" || s.applying(rt.ID) {
		return bs // an apply in flight writes the statuses itself
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	var c *agentconn.Client
	var procs map[string]agentconn.ProcessInfo
	for i, b := range bs {
		st := statusOf(b)
		if st.SandboxID != rt.CurrentSandboxID {
			continue
		}
		changed := false
		for j, w := range st.Workers {
			if w.State != WorkerRunning || w.ProcessID == "" {
				continue
			}
			if procs == nil {
				var err error
				if c, _, err = s.runtimes.AgentOf(ctx, rt); err != nil {
					return bs
				}
				list, err := c.Processes(ctx)
				if err != nil {
					return bs
				}
				procs = map[string]agentconn.ProcessInfo{}
				for _, p := range list {
					procs[p.ID] = p
				}
			}
			p, ok := procs[w.ProcessID]
			if ok && p.Running {
				continue
			}
			w.State = WorkerExited
			if ok && p.Exit != nil {
				code := p.Exit.Code
				w.ExitCode = &code
			}
			w.Output = workerOutput(ctx, c, w.ProcessID)
			st.Workers[j] = w
			changed = true
		}
		if changed {
			data, err := encodeStatus(st)
			if err != nil {
				continue
			}
			// Only over the status read: an apply may have written a
			// newer one meanwhile.
			if ok, err := s.store.ReplaceBindingStatus(ctx, b.ID, b.Status, data); err == nil && ok {
				bs[i].Status = data
			}
		}
	}
	return bs
}

// refreshTimeout bounds reading workers' states from the agent.
const refreshTimeout = 5 * time.Second

// applying reports whether an apply to the runtime's sandbox is in flight.
func (s *Service) applying(runtimeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[runtimeID] != nil
}

// workerOutput is the end of an exited worker's output, as the agent kept
// it.
func workerOutput(ctx context.Context, c *agentconn.Client, id string) string {
	es, err := c.Replay(ctx, id, agentconn.Offsets{})
	if err != nil {
		return ""
	}
	var out bytes.Buffer
	_, _ = es.Wait(&out, &out) // what arrived is what there is
	return tail(out.Bytes())
}

// ContentsOf summarizes what a bundle ships.
func ContentsOf(b *capability.Bundle) Contents {
	c := Contents{
		Agents:     names(b.Agents, func(a capability.Agent) string { return a.Name }),
		Skills:     names(b.Skills, func(s capability.Skill) string { return s.Name }),
		Tools:      names(b.Tools, func(t capability.Tool) string { return t.Name }),
		MCPServers: names(b.MCPServers, func(m capability.MCPServer) string { return m.Name }),
		Workers:    names(b.Workers, func(w capability.Worker) string { return w.Name }),
		Setup:      names(b.Setup, func(s capability.Script) string { return s.Name }),
		Checks:     names(b.Checks, func(s capability.Script) string { return s.Name }),
		Flags:      []Flag{},
	}
	for _, f := range b.Flags {
		c.Flags = append(c.Flags, Flag{Name: f.Name, Description: f.Description, Default: f.Default})
	}
	return c
}

// names are the names of items, never nil.
func names[T any](items []T, name func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

// Problems says what went wrong applying the runtime's enabled bindings to
// its current sandbox, as they recorded it: a failed apply, failed setup
// scripts and checks, workers seen exited (listing the bindings reads
// their workers' states from the agent).
func (s *Service) Problems(ctx context.Context, rt store.Runtime) ([]string, error) {
	if rt.CurrentSandboxID == "" {
		return nil, nil
	}
	// What the bindings recorded: a runtime's status is read without
	// reaching into its sandbox.
	bs, err := s.store.ListBindings(ctx, rt.ID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range bs {
		st := statusOf(b)
		if !b.Enabled || st.SandboxID != rt.CurrentSandboxID || st.Rev != b.Rev {
			continue
		}
		if st.State == StateFailed && st.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", b.Name, st.Error))
		}
		for _, c := range st.Checks {
			if !c.OK {
				out = append(out, fmt.Sprintf("%s: check %s failed (exit %d)", b.Name, c.Name, c.ExitCode))
			}
		}
		for _, w := range st.Workers {
			if w.State == WorkerExited {
				code := "?"
				if w.ExitCode != nil {
					code = strconv.Itoa(*w.ExitCode)
				}
				out = append(out, fmt.Sprintf("%s: worker %s exited (exit %s)", b.Name, w.Name, code))
			}
		}
	}
	return out, nil
}
