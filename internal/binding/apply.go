package binding

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// Bounds of applying a set to a sandbox.
const (
	applyTimeout = 30 * time.Minute // one whole apply, setup scripts included
	outputTail   = 4 << 10          // what a step's status keeps of its output
	// managedFile holds what a materialization wrote (managedState), so
	// the next one removes what is no longer wanted.
	managedFile = capability.Root + "/.managed.json"
	home        = "/workspace"
)

// applyRun is one runtime's apply in flight; again asks it to run once
// more when it ends (a change arrived meanwhile).
type applyRun struct {
	done  chan struct{}
	again bool
	force bool
}

// runtimeEvent hears the runtime service's events: a sandbox that begins
// to run gets the set. A new sandbox gets the whole set; a resumed one is
// brought in line with what changed while it was paused (a binding
// disabled or uninstalled then), which costs one small upload when
// nothing did.
func (s *Service) runtimeEvent(e runtime.Event) {
	if e.Kind == runtime.EventRunning {
		s.schedule(e.Runtime.ID, true)
	}
}

// schedule applies the runtime's set to its sandbox in the background.
// force rewrites the files even when every binding looks applied.
func (s *Service) schedule(runtimeID string, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if run := s.runs[runtimeID]; run != nil {
		run.again = true
		run.force = run.force || force
		return
	}
	run := &applyRun{done: make(chan struct{}), force: force}
	s.runs[runtimeID] = run
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		for {
			ctx, cancel := context.WithTimeout(s.stopCtx, applyTimeout)
			s.mu.Lock()
			force := run.force
			run.again, run.force = false, false
			s.mu.Unlock()
			if err := s.apply(ctx, runtimeID, force); err != nil && ctx.Err() == nil {
				s.logger.Warn("applying capabilities", "runtime", runtimeID, "err", err)
			}
			cancel()
			s.mu.Lock()
			if !run.again || s.closed {
				delete(s.runs, runtimeID)
				close(run.done)
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}()
}

// Wait returns once nothing is being applied to the runtime's sandbox (a
// prompt runs against the whole set), or when ctx ends. A sandbox that
// began to run before the call is applied to first.
func (s *Service) Wait(ctx context.Context, runtimeID string) error {
	if s.events != nil {
		if err := s.events.Sync(ctx); err != nil {
			return err
		}
	}
	s.mu.Lock()
	run := s.runs[runtimeID]
	s.mu.Unlock()
	if run == nil {
		return nil
	}
	select {
	case <-run.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// apply brings the runtime's running sandbox in line with its bindings
// and sidecars. A runtime without a running sandbox gets them at its next
// start or resume.
func (s *Service) apply(ctx context.Context, runtimeID string, force bool) error {
	rt, err := s.store.GetRuntime(ctx, runtimeID)
	if err != nil || rt.Status != store.RuntimeRunning || rt.CurrentSandboxID == "" {
		return nil
	}
	bs, err := s.store.ListBindings(ctx, rt.ID)
	if err != nil {
		return err
	}
	sbID := rt.CurrentSandboxID
	if !force && len(rt.Config.Sidecars) == 0 && allApplied(bs, sbID) {
		return nil
	}
	c, rt, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return err
	}
	if err := startSidecars(ctx, c, rt.Config.Sidecars); err != nil {
		s.logger.Warn("starting sidecar services", "runtime", rt.ID, "err", err)
	}

	usable, bundles, err := s.loadEnabled(ctx, rt, bs)
	if err != nil {
		return err
	}
	resolved, err := s.resolve(ctx, rt.OrgID, usable, bundles)
	if err != nil {
		return err
	}
	resolved.MCPServers = withSidecars(resolved.MCPServers, rt)

	// Workers of bindings gone, disabled, or at another revision stop;
	// those a binding at its revision started keep running.
	current := map[string]int64{}
	for _, b := range usable {
		if st := statusOf(b); st.SandboxID == sbID && st.Rev == b.Rev && st.State == StateApplied {
			current[b.ID] = b.Rev
		}
	}
	if err := s.reapWorkers(ctx, c, func(w workerTag) bool { rev, ok := current[w.bindingID]; return ok && rev == w.rev }); err != nil {
		return err
	}
	for _, b := range bs {
		if st := statusOf(b); !b.Enabled && st.SandboxID == sbID && stopped(&st) {
			s.setStatus(ctx, b, st)
		}
	}

	var kept []string // capabilities applied to this sandbox as they are: their files stay as setup left them
	for _, b := range usable {
		if _, ok := current[b.ID]; ok {
			kept = append(kept, b.Name)
		}
	}
	if err := s.materialize(ctx, c, capability.Materialize(resolved), kept); err != nil {
		for _, b := range usable {
			s.setStatus(ctx, b, status{Status: Status{State: StateFailed, Error: "materializing: " + publicError(err), SandboxID: sbID}, Rev: b.Rev})
		}
		return err
	}

	for _, b := range usable {
		if _, ok := current[b.ID]; ok {
			continue // applied to this sandbox as it is
		}
		s.setStatus(ctx, b, s.applyOne(ctx, c, b, sbID, resolved))
	}
	return nil
}

// loadEnabled loads the bundles of the enabled bindings of bs: those that
// load are usable; one whose bundle is gone or unreadable records that
// it failed. An error is the store's trouble, not a binding's.
func (s *Service) loadEnabled(ctx context.Context, rt store.Runtime, bs []store.CapabilityBinding) ([]store.CapabilityBinding, map[string]*capability.Bundle, error) {
	bundles := map[string]*capability.Bundle{}
	var usable []store.CapabilityBinding
	for _, b := range bs {
		if !b.Enabled {
			continue
		}
		bundle, err := s.bundleOf(ctx, rt.OrgID, b.Source, b.Name, b.Version)
		if err != nil {
			if !errdefs.IsNotFound(err) && !errors.Is(err, errdefs.ErrFailedPrecondition) {
				return nil, nil, err // try again later
			}
			s.setStatus(ctx, b, status{Status: Status{State: StateFailed, Error: publicError(err), SandboxID: rt.CurrentSandboxID}, Rev: b.Rev})
			continue
		}
		bundles[b.ID] = bundle
		usable = append(usable, b)
	}
	return usable, bundles, nil
}

// applyOne runs b's setup scripts (to the first that fails), its checks
// and, when setup succeeded, starts its workers, in the sandbox sbID whose
// files were just materialized; it returns what b's status records.
func (s *Service) applyOne(ctx context.Context, c *agentconn.Client, b store.CapabilityBinding, sbID string, resolved capability.Resolved) status {
	st := status{Status: Status{State: StateApplied, SandboxID: sbID,
		Setup: []StepResult{}, Checks: []StepResult{}, Workers: []WorkerStatus{}}, Rev: b.Rev}
	for _, sc := range resolved.Setup {
		if sc.BindingID != b.ID {
			continue
		}
		res := runStep(ctx, c, sc.Name, sc.Run, sc.Dir, sc.Env, sc.Timeout)
		st.Setup = append(st.Setup, res)
		if !res.OK {
			st.State = StateFailed
			st.Error = fmt.Sprintf("setup %s failed (exit %d)", sc.Name, res.ExitCode)
			break
		}
	}
	for _, ch := range resolved.Checks {
		if ch.BindingID == b.ID {
			st.Checks = append(st.Checks, runStep(ctx, c, ch.Name, ch.Run, ch.Dir, ch.Env, ch.Timeout))
		}
	}
	if st.State == StateApplied {
		for _, w := range resolved.Workers {
			if w.BindingID == b.ID {
				st.Workers = append(st.Workers, startWorker(ctx, c, workerTag{bindingID: b.ID, rev: b.Rev, name: w.Name}, w, s.now()))
			}
		}
	}
	at := s.now()
	st.AppliedAt = &at
	return st
}

// stopped marks st's running workers stopped, and reports whether there
// were any.
func stopped(st *status) bool {
	found := false
	for i, w := range st.Workers {
		if w.State == WorkerRunning {
			st.Workers[i].State = WorkerStopped
			found = true
		}
	}
	return found
}

// withSidecars adds the MCP servers of the runtime's sidecar capabilities
// to those of its bindings.
func withSidecars(servers []capability.ResolvedMCPServer, rt store.Runtime) []capability.ResolvedMCPServer {
	if slices.Contains(rt.Config.Sidecars, sidecar.ComputerUse) {
		servers = append(servers, capability.ResolvedMCPServer{
			MCPServer:  capability.MCPServer{Name: "computer-use", Type: capability.MCPHTTP, URL: sidecar.ComputerUseMCPURL},
			Capability: "sidecar:" + sidecar.ComputerUse,
		})
	}
	return servers
}

// MCPServers are the MCP servers a harness in the runtime's sandbox is
// given: its enabled bindings' (those whose bundles load) and its
// sidecars'.
func (s *Service) MCPServers(ctx context.Context, rt store.Runtime) ([]capability.ResolvedMCPServer, error) {
	bs, err := s.store.ListBindings(ctx, rt.ID)
	if err != nil {
		return nil, err
	}
	bundles := map[string]*capability.Bundle{}
	var usable []store.CapabilityBinding
	for _, b := range bs {
		if bundle, err := s.bundleOf(ctx, rt.OrgID, b.Source, b.Name, b.Version); err == nil && b.Enabled {
			bundles[b.ID] = bundle
			usable = append(usable, b)
		}
	}
	res, err := s.resolve(ctx, rt.OrgID, usable, bundles)
	if err != nil {
		return nil, err
	}
	return withSidecars(res.MCPServers, rt), nil
}

// allApplied reports whether every enabled binding was applied to the
// sandbox as it is now.
func allApplied(bs []store.CapabilityBinding, sandboxID string) bool {
	for _, b := range bs {
		st := statusOf(b)
		if b.Enabled && (st.SandboxID != sandboxID || st.Rev != b.Rev || st.State == StatePending) {
			return false
		}
	}
	return true
}

// managedFile's contents: the files a materialization wrote outside
// capability.Root (everything under it is paddock's anyway).
type managedState struct {
	Outside []string `json:"outside"`
}

// maxManaged bounds the entries of a managedState read back.
const maxManaged = 20000

// outsideManaged reports whether p is a file a materialization may have
// written outside capability.Root: only those are removed on the word of
// the state file, which the sandbox can change.
func outsideManaged(p string) bool {
	return strings.HasPrefix(p, capability.AgentsDir+"/") || strings.HasPrefix(p, capability.SkillsDir+"/") || p == capability.KimiMCPConfig
}

// paddockDirs are the directories under capability.Root that are no
// capability's: materialize writes them whole each time.
var paddockDirs = []string{"bin", "codex", "gemini"}

// materialize writes a plan into the sandbox. The directories of the
// capabilities in kept (applied to this sandbox as they are) are left as
// setup made them; every other capability's directory is written afresh
// (its setup runs again), those of capabilities no longer bound are
// removed, and paddock's own files and directories are rewritten whole.
// Outside capability.Root, the files the last materialization wrote and
// this one does not are removed, and nothing else.
func (s *Service) materialize(ctx context.Context, c *agentconn.Client, plan capability.Plan, kept []string) error {
	prev, err := previousManaged(ctx, c)
	if err != nil {
		return err
	}
	planned := map[string]bool{}
	wanted := map[string]bool{} // capability directories under Root
	for _, f := range plan.Files {
		planned[f.Path] = true
		if name, _, ok := strings.Cut(strings.TrimPrefix(f.Path, capability.Root+"/"), "/"); ok && strings.HasPrefix(f.Path, capability.Root+"/") {
			wanted[name] = true
		}
	}
	var stale []string
	for _, p := range prev.Outside {
		if p = path.Clean(p); outsideManaged(p) && !planned[p] {
			stale = append(stale, p)
		}
	}
	entries, _, err := c.List(ctx, capability.Root, agentconn.ListOptions{MaxEntries: maxManaged})
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	for _, e := range entries {
		switch {
		case e.Name == path.Base(managedFile):
		case slices.Contains(paddockDirs, e.Name), !wanted[e.Name], !slices.Contains(kept, e.Name):
			stale = append(stale, path.Join(capability.Root, e.Name))
		}
	}
	for _, p := range stale {
		if err := c.RemoveAll(ctx, p); err != nil && !errdefs.IsNotFound(err) {
			s.logger.Warn("removing what a capability no longer ships", "path", p, "err", err)
		}
	}
	state, err := json.Marshal(managedState{Outside: plan.Managed})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) error {
		rel := strings.TrimPrefix(path.Clean(name), home+"/")
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, f := range plan.Files {
		if !strings.HasPrefix(f.Path, home+"/") {
			return fmt.Errorf("materialize: %s is outside %s", f.Path, home)
		}
		if name, _, ok := strings.Cut(strings.TrimPrefix(f.Path, capability.Root+"/"), "/"); ok &&
			strings.HasPrefix(f.Path, capability.Root+"/") && slices.Contains(kept, name) {
			continue // as it is, and as its setup left it
		}
		if err := add(f.Path, int64(f.Mode.Perm()), f.Data); err != nil {
			return err
		}
	}
	if err := add(managedFile, 0o644, state); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	_, err = c.UploadTar(ctx, home, &buf)
	return err
}

// previousManaged reads what the last materialization wrote outside
// capability.Root: nothing when there was none; an error when it cannot
// tell (then nothing is changed, and the next apply tries again). A state
// the sandbox made unreadable is its loss: it is taken as empty.
func previousManaged(ctx context.Context, c *agentconn.Client) (managedState, error) {
	var st managedState
	r, err := c.ReadFile(ctx, managedFile)
	if errdefs.IsNotFound(err) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return st, err
	}
	if json.Unmarshal(data, &st) != nil {
		// The first layout was a bare list of those files.
		if json.Unmarshal(data, &st.Outside) != nil {
			return managedState{}, nil
		}
	}
	st.Outside = st.Outside[:min(len(st.Outside), maxManaged)]
	return st, nil
}

// runStep runs a setup script or check to its end.
func runStep(ctx context.Context, c *agentconn.Client, name, run, dir string, env map[string]string, timeout time.Duration) StepResult {
	t0 := time.Now()
	res := StepResult{Name: name, RanAt: t0.UTC().Truncate(time.Microsecond)}
	out, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"/bin/sh", "-c", run}, Cwd: dir, Env: env, Timeout: timeout})
	res.DurationMS = time.Since(t0).Milliseconds()
	if err != nil {
		res.ExitCode = -1
		res.Output = "could not run: " + publicError(err)
		return res
	}
	res.ExitCode = out.Exit.Code
	res.OK = out.Exit.Code == 0 && out.Exit.Signal == "" && !out.Exit.TimedOut
	if out.Exit.TimedOut {
		res.Output = fmt.Sprintf("timed out after %s\n", timeout)
	}
	res.Output += tail(append(out.Stdout, out.Stderr...))
	return res
}

// workerTag names a worker process: the binding and revision that started
// it, and the worker's name. It is the process's $0 (sh -c's first
// argument), so the agent's process list says whose each worker is.
type workerTag struct {
	bindingID string
	rev       int64
	name      string
}

const workerTagPrefix = "paddock-worker:"

func (w workerTag) String() string {
	return fmt.Sprintf("%s%s:%d:%s", workerTagPrefix, w.bindingID, w.rev, w.name)
}

func parseWorkerTag(s string) (workerTag, bool) {
	rest, ok := strings.CutPrefix(s, workerTagPrefix)
	if !ok {
		return workerTag{}, false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return workerTag{}, false
	}
	rev, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return workerTag{}, false
	}
	return workerTag{bindingID: parts[0], rev: rev, name: parts[2]}, true
}

// startWorker starts a worker as a background process of the agent.
func startWorker(ctx context.Context, c *agentconn.Client, tag workerTag, w capability.ResolvedWorker, now time.Time) WorkerStatus {
	ws := WorkerStatus{Name: w.Name, State: WorkerExited}
	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"/bin/sh", "-c", w.Run, tag.String()}, Cwd: w.Dir, Env: w.Env, Background: true})
	if err != nil {
		code := -1
		ws.ExitCode = &code
		ws.Output = "could not start: " + publicError(err)
		return ws
	}
	ws.ProcessID, ws.State, ws.StartedAt = es.ID(), WorkerRunning, &now
	_ = es.Close() // a background process keeps running
	return ws
}

// reapWorkers stops the running worker processes keep refuses, found by
// their tags in the agent's process list — whatever happened to their
// bindings since they started: SIGTERM, then SIGKILL for any still running
// after reapGrace, so a replacement never runs beside the worker it
// replaces.
func (s *Service) reapWorkers(ctx context.Context, c *agentconn.Client, keep func(workerTag) bool) error {
	procs, err := c.Processes(ctx)
	if err != nil {
		return err
	}
	var reaped []string
	for _, p := range procs {
		if !p.Running || len(p.Argv) < 4 || p.Argv[0] != "/bin/sh" {
			continue
		}
		if tag, ok := parseWorkerTag(p.Argv[3]); ok && !keep(tag) {
			if err := c.Signal(ctx, p.ID, syscall.SIGTERM, false); err != nil && !errdefs.IsNotFound(err) {
				return err
			}
			reaped = append(reaped, p.ID)
		}
	}
	for deadline := time.Now().Add(reapGrace); len(reaped) > 0; {
		procs, err := c.Processes(ctx)
		if err != nil {
			return err
		}
		reaped = slices.DeleteFunc(reaped, func(id string) bool {
			return !slices.ContainsFunc(procs, func(p agentconn.ProcessInfo) bool { return p.ID == id && p.Running })
		})
		if len(reaped) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, id := range reaped {
				if err := c.Signal(ctx, id, syscall.SIGKILL, false); err != nil && !errdefs.IsNotFound(err) {
					return err
				}
			}
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// reapGrace is how long a stopped worker has to exit before it is killed.
const reapGrace = 5 * time.Second

// startSidecars starts the sidecar services of names that are not running
// yet: computer_use's display, browser and MCP server are one supervised
// process of the agent binary.
func startSidecars(ctx context.Context, c *agentconn.Client, names []string) error {
	if !slices.Contains(names, sidecar.ComputerUse) {
		return nil
	}
	procs, err := c.Processes(ctx)
	if err != nil {
		return err
	}
	argv := sidecar.ComputerUseArgv()
	for _, p := range procs {
		if p.Running && slices.Equal(p.Argv, argv) {
			return nil
		}
	}
	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: argv, Background: true})
	if err != nil {
		return err
	}
	return es.Close()
}

// tail is the last outputTail bytes of b, as text.
func tail(b []byte) string {
	if len(b) > outputTail {
		b = b[len(b)-outputTail:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// publicError is what a client may see of err.
func publicError(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return errdefs.PublicMessage(err, "internal error")
}
