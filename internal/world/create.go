package world

import (
	"context"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// MemberRequest is one member a create names: its configuration from a
// template (Template, by name or id) with Config over it, or from Config
// alone.
type MemberRequest struct {
	Name     string
	Template string
	Config   store.RuntimeConfig
	Command  []string
}

// Request is what a create asks for.
type Request struct {
	Name    string
	Members []MemberRequest
}

// memberName is a member's name: a DNS label, which its world's other
// members resolve.
var memberName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// worldName is a world's name.
var worldName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func invalid(format string, args ...any) error {
	return errdefs.InvalidArgument(CodeInvalid, format, args...)
}

// check validates r's shape, before any configuration is resolved.
func (r Request) check() error {
	if !worldName.MatchString(r.Name) {
		return invalid("name %q is not valid: 1 to 63 letters, digits, '.', '_' and '-', starting with a letter or digit", r.Name)
	}
	if len(r.Members) == 0 || len(r.Members) > MaxMembers {
		return invalid("a world has 1 to %d members, not %d", MaxMembers, len(r.Members))
	}
	seen := map[string]bool{}
	for _, m := range r.Members {
		switch {
		case !memberName.MatchString(m.Name):
			return invalid("member name %q is not valid: a DNS label (lowercase letters, digits and '-', at most 63)", m.Name)
		case seen[m.Name]:
			return invalid("member name %q is given twice", m.Name)
		case len(m.Command) > MaxArgs:
			return invalid("member %s: command has more than %d arguments", m.Name, MaxArgs)
		case len(m.Command) > 0 && m.Command[0] == "":
			return invalid("member %s: command must name a program", m.Name)
		}
		for _, a := range m.Command {
			if strings.IndexByte(a, 0) >= 0 {
				return invalid("member %s: command contains a NUL byte", m.Name)
			}
		}
		if n := m.Config.Network; (n.Mode != "" && n.Mode != "none") || len(n.Allow) > 0 || len(n.Deny) > 0 {
			return invalid("member %s: a world's members are on its private network only; give no network", m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// resolve gives each member its configuration, checked as a project's
// would be, and the sources its sandbox is made from; all run on one
// provider, which must support worlds.
func (s *Service) resolve(ctx context.Context, ws store.Workspace, r Request) (Spec, []store.Runtime, error) {
	spec := Spec{V: specVersion}
	srcs := make([]store.Runtime, 0, len(r.Members))
	for i, m := range r.Members {
		cfg := m.Config
		if m.Template != "" {
			t, err := s.runtimes.Template(ctx, ws, m.Template)
			if err != nil {
				return spec, nil, err
			}
			cfg = runtime.FromTemplate(t.Config, cfg)
			if n := cfg.Network; (n.Mode != "" && n.Mode != "none") || len(n.Allow) > 0 || len(n.Deny) > 0 {
				cfg.Network = store.NetworkConfig{} // the world's network replaces the template's
			}
		}
		src, err := s.runtimes.TaskSource(ctx, ws, cfg)
		if err != nil {
			return spec, nil, err
		}
		if i == 0 {
			spec.Provider = src.Config.Provider
		} else if src.Config.Provider != spec.Provider {
			return spec, nil, invalid("a world's members run on one provider: %s is on %s, %s on %s",
				r.Members[0].Name, spec.Provider, m.Name, src.Config.Provider)
		}
		spec.Members = append(spec.Members, Member{Name: m.Name, Template: m.Template, Config: src.Config,
			Command: m.Command, SandboxID: uuid.NewString()})
		srcs = append(srcs, src)
	}
	return spec, srcs, s.runtimes.WorldsSupported(spec.Provider)
}

// Create makes a world of ws: its network, then every member's sandbox,
// then each member's command. Anything that fails tears down what was
// made (members, network) and the world is recorded failed; the public
// error is returned.
func (s *Service) Create(ctx context.Context, ws store.Workspace, r Request) (World, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return World{}, errdefs.Unavailable("shutting_down", "the server is shutting down")
	}
	if err := r.check(); err != nil {
		return World{}, err
	}
	spec, srcs, err := s.resolve(ctx, ws, r)
	if err != nil {
		return World{}, err
	}
	w, err := s.newWorld(ws, r.Name, spec)
	if err != nil {
		return World{}, err
	}
	defer s.lock(w.ID)()
	if err := s.store.CreateWorld(ctx, w.World); err != nil {
		return World{}, err
	}
	if err := s.runtimes.CreateWorldNetwork(ctx, spec.Provider, w.ID); err != nil {
		return s.fail(ctx, w, store.WorldStarting, err)
	}
	for i, m := range w.Spec.Members {
		if _, err := s.runtimes.StartWorldSandbox(ctx, m.SandboxID, srcs[i], w.ID, m.Name); err != nil {
			return s.fail(ctx, w, store.WorldStarting, err)
		}
	}
	for _, m := range w.Spec.Members {
		if err := s.startCommand(ctx, m); err != nil {
			return s.fail(ctx, w, store.WorldStarting, err)
		}
	}
	if ok, err := s.write(ctx, &w, store.WorldRunning, store.WorldStarting); err != nil || !ok {
		return s.fail(ctx, w, store.WorldStarting, errdefs.Conflict(CodeConflict, "world %s changed while it started", w.ID))
	}
	s.logger.InfoContext(ctx, "world started", "world", w.ID, "members", len(w.Spec.Members))
	return w, nil
}

// startCommand starts m's command in the background in its sandbox.
func (s *Service) startCommand(ctx context.Context, m Member) error {
	if len(m.Command) == 0 {
		return nil
	}
	sb, err := s.store.GetSandbox(ctx, m.SandboxID)
	if err != nil {
		return err
	}
	agent, err := s.runtimes.WorldAgent(sb)
	if err != nil {
		return err
	}
	es, err := agent.Exec(ctx, agentconn.ExecRequest{Argv: m.Command, Cwd: "/workspace", Background: true})
	if err != nil {
		return err // the agent's own code: command_not_found and the others
	}
	return es.Close()
}

// fail tears down w (left in status from) after cause, records it
// failed with cause's public message, and returns cause.
func (s *Service) fail(ctx context.Context, w World, from string, cause error) (World, error) {
	msg := "the world could not start"
	if pe, ok := errdefs.Public(cause); ok {
		msg = pe.Message
	}
	s.logger.WarnContext(ctx, "world failed", "world", w.ID, "err", cause)
	s.teardown(ctx, w, runtime.KillProvisionFailed)
	w.Spec.Error = msg
	if _, err := s.write(ctx, &w, store.WorldFailed, from); err != nil {
		s.logger.ErrorContext(ctx, "recording a failed world", "world", w.ID, "err", err)
	}
	return w, cause
}

// teardown ends every member's sandbox that was made with reason, then
// removes the world's network; it logs what it could not undo, and
// reports whether everything went.
func (s *Service) teardown(ctx context.Context, w World, reason string) bool {
	ctx = context.WithoutCancel(ctx)
	clean := true
	for _, m := range w.Spec.Members {
		if _, err := s.runtimes.EndWorldSandbox(ctx, m.SandboxID, reason); err != nil && !errdefs.IsNotFound(err) {
			s.logger.ErrorContext(ctx, "ending a world's member", "world", w.ID, "member", m.Name, "err", err)
			clean = false
		}
	}
	if err := s.runtimes.RemoveWorldNetwork(ctx, w.Spec.Provider, w.ID); err != nil {
		s.logger.ErrorContext(ctx, "removing a world's network", "world", w.ID, "err", err)
		clean = false
	}
	return clean
}
