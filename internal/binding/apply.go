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
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Bounds of applying a set to a sandbox.
const (
	applyTimeout = 30 * time.Minute // one whole apply, setup scripts included
	outputTail   = 4 << 10          // what a step's status keeps of its output
	// managedFile lists the files a materialization wrote outside
	// capability.Root, so the next one removes those no longer wanted.
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

// sandboxRunning is the runtime service's OnRunning hook: a new sandbox
// gets the whole set; a resumed one whatever changed while it was paused.
func (s *Service) sandboxRunning(_ context.Context, rt store.Runtime, _ store.Sandbox, fresh bool) {
	if fresh || len(rt.Config.Sidecars) > 0 {
		s.schedule(rt.ID, fresh)
		return
	}
	s.schedule(rt.ID, false)
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
// prompt runs against the whole set), or when ctx ends.
func (s *Service) Wait(ctx context.Context, runtimeID string) error {
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

	// Disabled bindings stop their workers here.
	for _, b := range bs {
		if !b.Enabled {
			s.stopWorkers(ctx, rt, b)
		}
	}
	bundles := map[string]*capability.Bundle{}
	var failed []string
	for _, b := range bs {
		if !b.Enabled {
			continue
		}
		bundle, err := s.bundleOf(ctx, rt.OrgID, b.Source, b.Name, b.Version)
		if err != nil {
			s.setStatus(ctx, b, status{BindingStatus: client.BindingStatus{State: client.BindingFailed, Error: publicError(err), SandboxID: sbID}, Rev: b.Rev})
			failed = append(failed, b.ID)
			continue
		}
		bundles[b.ID] = bundle
	}
	var usable []store.CapabilityBinding
	for _, b := range bs {
		if b.Enabled && !slices.Contains(failed, b.ID) {
			usable = append(usable, b)
		}
	}
	resolved, err := s.resolve(ctx, rt.OrgID, usable, bundles)
	if err != nil {
		return err
	}
	resolved.MCPServers = withSidecars(resolved.MCPServers, rt)
	if err := materialize(ctx, c, capability.Materialize(resolved)); err != nil {
		for _, b := range usable {
			s.setStatus(ctx, b, status{BindingStatus: client.BindingStatus{State: client.BindingFailed, Error: "materializing: " + publicError(err), SandboxID: sbID}, Rev: b.Rev})
		}
		return err
	}

	for _, b := range usable {
		old := statusOf(b)
		if old.SandboxID == sbID && old.Rev == b.Rev && old.State == client.BindingApplied {
			continue // applied to this sandbox as it is
		}
		if old.SandboxID == sbID {
			s.stopWorkers(ctx, rt, b) // its old configuration's
		}
		st := status{BindingStatus: client.BindingStatus{State: client.BindingApplied, SandboxID: sbID,
			Setup: []client.StepResult{}, Checks: []client.StepResult{}, Workers: []client.WorkerStatus{}}, Rev: b.Rev}
		for _, sc := range resolved.Setup {
			if sc.BindingID != b.ID {
				continue
			}
			res := runStep(ctx, c, sc.Name, sc.Run, sc.Dir, sc.Env, sc.Timeout)
			st.Setup = append(st.Setup, res)
			if !res.OK {
				st.State = client.BindingFailed
				st.Error = fmt.Sprintf("setup %s failed (exit %d)", sc.Name, res.ExitCode)
				break
			}
		}
		for _, ch := range resolved.Checks {
			if ch.BindingID == b.ID {
				st.Checks = append(st.Checks, runStep(ctx, c, ch.Name, ch.Run, ch.Dir, ch.Env, ch.Timeout))
			}
		}
		if st.State == client.BindingApplied {
			for _, w := range resolved.Workers {
				if w.BindingID == b.ID {
					st.Workers = append(st.Workers, startWorker(ctx, c, w, s.now()))
				}
			}
		}
		at := s.now()
		st.AppliedAt = &at
		s.setStatus(ctx, b, st)
	}
	return nil
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
// given: its enabled bindings' and its sidecars'.
func (s *Service) MCPServers(ctx context.Context, rt store.Runtime) ([]client.ResolvedMCPServer, error) {
	bs, err := s.store.ListBindings(ctx, rt.ID)
	if err != nil {
		return nil, err
	}
	res, err := s.resolve(ctx, rt.OrgID, bs, nil)
	if err != nil {
		return nil, err
	}
	var out []client.ResolvedMCPServer
	for _, m := range withSidecars(res.MCPServers, rt) {
		out = append(out, client.ResolvedMCPServer{
			Name: m.Name, Capability: m.Capability, Type: m.Type, Command: m.Command, Args: m.Args, Env: m.Env, URL: m.URL,
		})
	}
	return out, nil
}

// allApplied reports whether every enabled binding was applied to the
// sandbox as it is now.
func allApplied(bs []store.CapabilityBinding, sandboxID string) bool {
	for _, b := range bs {
		st := statusOf(b)
		if b.Enabled && (st.SandboxID != sandboxID || st.Rev != b.Rev || st.State == client.BindingPending) {
			return false
		}
	}
	return true
}

// materialize writes a plan into the sandbox: capability.Root is
// replaced whole, files written elsewhere before and no longer planned are
// removed, and the list of those written elsewhere is kept for next time.
func materialize(ctx context.Context, c *agentconn.Client, plan capability.Plan) error {
	for _, p := range previousManaged(ctx, c) {
		if !slices.Contains(plan.Managed, p) && strings.HasPrefix(p, home+"/") {
			if err := c.RemoveAll(ctx, p); err != nil && !errdefs.IsNotFound(err) {
				return err
			}
		}
	}
	if err := c.RemoveAll(ctx, capability.Root); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	managed, err := json.Marshal(plan.Managed)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	add := func(name string, mode int64, data []byte) error {
		rel := strings.TrimPrefix(path.Clean(name), home+"/")
		for d := path.Dir(rel); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
		return tw.WriteHeader(&tar.Header{Name: rel, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg})
	}
	for _, f := range plan.Files {
		if !strings.HasPrefix(f.Path, home+"/") {
			return fmt.Errorf("materialize: %s is outside %s", f.Path, home)
		}
		if err := add(f.Path, int64(f.Mode.Perm()), f.Data); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := add(managedFile, 0o644, managed); err != nil {
		return err
	}
	if _, err := tw.Write(managed); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	_, err = c.UploadTar(ctx, home, &buf)
	return err
}

// previousManaged reads the list the last materialization left.
func previousManaged(ctx context.Context, c *agentconn.Client) []string {
	r, err := c.ReadFile(ctx, managedFile)
	if err != nil {
		return nil
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil
	}
	var out []string
	_ = json.Unmarshal(data, &out)
	return out
}

// runStep runs a setup script or check to its end.
func runStep(ctx context.Context, c *agentconn.Client, name, run, dir string, env map[string]string, timeout time.Duration) client.StepResult {
	t0 := time.Now()
	res := client.StepResult{Name: name, RanAt: t0.UTC().Truncate(time.Microsecond)}
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

// startWorker starts a worker as a background process of the agent.
func startWorker(ctx context.Context, c *agentconn.Client, w capability.ResolvedWorker, now time.Time) client.WorkerStatus {
	ws := client.WorkerStatus{Name: w.Name, State: client.WorkerExited}
	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"/bin/sh", "-c", w.Run}, Cwd: w.Dir, Env: w.Env, Background: true})
	if err != nil {
		code := -1
		ws.ExitCode = &code
		ws.Output = "could not start: " + publicError(err)
		return ws
	}
	ws.ProcessID, ws.State, ws.StartedAt = es.ID(), client.WorkerRunning, &now
	_ = es.Close() // a background process keeps running
	return ws
}

// stopWorkers stops the workers a binding started in the runtime's
// current sandbox.
func (s *Service) stopWorkers(ctx context.Context, rt store.Runtime, b store.CapabilityBinding) {
	st := statusOf(b)
	if st.SandboxID == "" || st.SandboxID != rt.CurrentSandboxID || rt.Status != store.RuntimeRunning {
		return
	}
	var running bool
	for _, w := range st.Workers {
		running = running || w.State == client.WorkerRunning
	}
	if !running {
		return
	}
	c, _, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return
	}
	for i, w := range st.Workers {
		if w.State != client.WorkerRunning || w.ProcessID == "" {
			continue
		}
		if err := c.Signal(ctx, w.ProcessID, syscall.SIGTERM, false); err != nil && !errdefs.IsNotFound(err) {
			s.logger.Warn("stopping a worker", "runtime", rt.ID, "worker", w.Name, "err", err)
		}
		st.Workers[i].State = client.WorkerStopped
	}
	s.setStatus(ctx, b, st)
}

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
	if e, ok := errdefs.Public(err); ok {
		return e.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return "internal error"
}
