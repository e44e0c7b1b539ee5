package shim

import (
	"context"
	"maps"
	"strings"
	"sync"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// Limits of an injected environment.
const (
	maxInjectedVars  = 512
	maxInjectedBytes = 1 << 20
)

// injectedEnv is the environment the control plane injects into every
// process the shim starts: the runtime's secrets and its egress settings.
// It lives in memory only, so no secret value reaches the sandbox's disk
// or a snapshot of it; the control plane sends it again on every new
// connection.
type injectedEnv struct {
	mu  sync.RWMutex
	env map[string]string
	set bool // replace has been called: the agent was given an environment
}

// snapshot returns the current set; callers must not modify it.
func (e *injectedEnv) snapshot() map[string]string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.env
}

// given reports whether the agent was given an environment since it
// started (an empty one included).
func (e *injectedEnv) given() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.set
}

// replace installs env as the whole injected set.
func (e *injectedEnv) replace(env map[string]string) error {
	if len(env) > maxInjectedVars {
		return errInvalid("invalid_env", "at most %d injected variables", maxInjectedVars)
	}
	size := 0
	for k, v := range env {
		if !validEnvName(k) || strings.IndexByte(v, 0) >= 0 {
			return errInvalid("invalid_env", "environment variable %q is malformed", k)
		}
		size += len(k) + len(v)
	}
	if size > maxInjectedBytes {
		return errInvalid("invalid_env", "the injected environment is larger than %d bytes", maxInjectedBytes)
	}
	e.mu.Lock()
	e.env, e.set = maps.Clone(env), true
	e.mu.Unlock()
	return nil
}

// validEnvName reports whether k can name an environment variable.
func validEnvName(k string) bool {
	return k != "" && !strings.ContainsAny(k, "=\x00")
}

func (h *agentService) SetEnv(ctx context.Context, req *connect.Request[agentpb.SetEnvRequest]) (*connect.Response[agentpb.SetEnvResponse], error) {
	if err := h.s.env.replace(req.Msg.Env); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentpb.SetEnvResponse{Count: int32(len(req.Msg.Env))}), nil
}
