package runtime

import (
	"context"
	"slices"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// maxDeclaredPorts bounds the ports a runtime declares.
const maxDeclaredPorts = 64

// SetPortPublic marks a port of the runtime's sandbox public (its preview
// answers without a credential) or private. It runs under the runtime's
// lock on the runtime as it is then, so a start, pause or configuration
// change running at the same time neither undoes it nor is undone by it.
// It writes the configuration only; when another server on the same
// database wrote the row first (a start, another port), the change is
// made again on the row as that server left it, so both are kept.
// Marking a port private also takes back its declaration as public once
// listening (Ports), so the choice stays made.
func (s *Service) SetPortPublic(ctx context.Context, runtimeID string, port int, public bool) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return writeRuntime(ctx, s.store, rt, nil, func(rt store.Runtime) (store.Runtime, error) {
			return s.store.SetRuntimeConfig(ctx, rt.ID, rt.Version, withPort(rt.Config, port, public), s.now())
		})
	})
}

// withPort is c with port among its public ports, or not.
func withPort(c store.RuntimeConfig, port int, public bool) store.RuntimeConfig {
	ports := slices.DeleteFunc(slices.Clone(c.PublicPorts), func(p int) bool { return p == port })
	if public {
		ports = append(ports, port)
		slices.Sort(ports)
	}
	if len(ports) == 0 {
		ports = nil
	}
	c.PublicPorts = ports
	if !public {
		c.Ports = slices.Clone(c.Ports)
		for i := range c.Ports {
			if c.Ports[i].Port == port {
				c.Ports[i].Public = false
			}
		}
	}
	return c
}

// checkDeclaredPorts refuses a declared port out of range or given twice,
// and sorts them.
func checkDeclaredPorts(c store.RuntimeConfig) (store.RuntimeConfig, error) {
	if len(c.Ports) > maxDeclaredPorts {
		return c, errdefs.InvalidArgument("invalid_port", "a runtime declares at most %d ports", maxDeclaredPorts)
	}
	c.Ports = slices.Clone(c.Ports)
	slices.SortFunc(c.Ports, func(a, b store.DeclaredPort) int { return a.Port - b.Port })
	for i, p := range c.Ports {
		if p.Port < 1 || p.Port > 65535 {
			return c, errdefs.InvalidArgument("invalid_port", "port %d is not 1 to 65535", p.Port)
		}
		if i > 0 && c.Ports[i-1].Port == p.Port {
			return c, errdefs.InvalidArgument("invalid_port", "port %d is declared twice", p.Port)
		}
	}
	if len(c.Ports) == 0 {
		c.Ports = nil
	}
	return c, nil
}

// pendingPublic reports whether c declares port public once listening
// and it is not public yet.
func pendingPublic(c store.RuntimeConfig, port int) bool {
	return !slices.Contains(c.PublicPorts, port) &&
		slices.ContainsFunc(c.Ports, func(p store.DeclaredPort) bool { return p.Port == port && p.Public })
}

// PublishListening makes public the ports rt declares public once
// listening (RuntimeConfig.Ports) that are among listening, the ports its
// sandbox's agent saw listen. It writes nothing when there are none.
func (s *Service) PublishListening(ctx context.Context, rt store.Runtime, listening []int) (store.Runtime, error) {
	if !slices.ContainsFunc(listening, func(p int) bool { return pendingPublic(rt.Config, p) }) {
		return rt, nil
	}
	return onRuntime(ctx, s, rt.ID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return writeRuntime(ctx, s.store, rt, nil, func(rt store.Runtime) (store.Runtime, error) {
			c := rt.Config
			for _, p := range listening {
				if pendingPublic(c, p) {
					c = withPort(c, p, true)
				}
			}
			return s.store.SetRuntimeConfig(ctx, rt.ID, rt.Version, c, s.now())
		})
	})
}

// PublishIfListening is PublishListening for one port, asking rt's
// sandbox's agent whether something listens on it: for a request to a
// port rt declares public once listening. It neither wakes rt nor counts
// as its activity (only a running runtime is asked), and reports whether
// port is public now.
func (s *Service) PublishIfListening(ctx context.Context, rt store.Runtime, port int) (store.Runtime, bool, error) {
	if slices.Contains(rt.Config.PublicPorts, port) {
		return rt, true, nil
	}
	if !pendingPublic(rt.Config, port) || rt.Status != store.RuntimeRunning {
		return rt, false, nil
	}
	agent, err := s.quietAgent(ctx, rt)
	if err != nil {
		return rt, false, err
	}
	ls, err := agent.ListPorts(ctx)
	if err != nil {
		return rt, false, err
	}
	if !slices.ContainsFunc(ls, func(l agentconn.ListeningPort) bool { return l.Port == port }) {
		return rt, false, nil
	}
	rt, err = s.PublishListening(ctx, rt, []int{port})
	return rt, err == nil && slices.Contains(rt.Config.PublicPorts, port), err
}

// quietAgent is the agent of rt's running sandbox, without waking rt or
// counting the call as activity.
func (s *Service) quietAgent(ctx context.Context, rt store.Runtime) (*agentconn.Client, error) {
	if err := s.pending.check(ctx, rt.ID); err != nil {
		return nil, err
	}
	if rt.CurrentSandboxID == "" {
		return nil, agentStatus(rt.ID, rt)
	}
	sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
	if err != nil {
		return nil, err
	}
	if sb.State != store.SandboxRunning {
		return nil, errdefs.Conflict(CodeBusy, "runtime %s is changing state; try again", rt.ID)
	}
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return nil, err
	}
	if !p.Capabilities().Agent {
		return nil, errdefs.NotImplemented(CodeAgentNotSupported, "provider %s does not run the sandbox agent", p.Name())
	}
	return s.agents.get(ctx, rt.ID, sb, p)
}
