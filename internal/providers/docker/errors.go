package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Codes this provider puts on its public errors.
const (
	CodeImageNotFound       = "image_not_found"
	CodeImageNotAllowed     = "image_not_allowed"
	CodeShimNotStatic       = "shim_not_static"
	CodeSandboxNotFound     = "sandbox_not_found"
	CodeSandboxExists       = "sandbox_exists"
	CodeSandboxNotRunning   = "sandbox_not_running"
	CodeSandboxPaused       = "sandbox_paused"
	CodeSandboxExited       = "sandbox_exited"
	CodeAgentNotReady       = "agent_not_ready"
	CodeAgentUnavailable    = "agent_unavailable"
	CodeInvalidSpec         = provider.CodeInvalidSpec
	CodeInvalidHandle       = "invalid_handle"
	CodeNetworkNotSupported = provider.CodeNetworkNotSupported
	CodeWorkspaceInUse      = "workspace_in_use"
	CodeWorkspaceForeign    = "workspace_not_managed"
	CodeProviderUnavailable = "provider_unavailable"
	CodeProviderTimeout     = "provider_timeout"
	CodeProviderError       = "provider_error"
	// CodeNetworkPoolExhausted: the engine has no address pool left for
	// another network (a world's, or the egress networks).
	CodeNetworkPoolExhausted = "network_pool_exhausted"
)

// engineErr maps an error from the Docker engine (or the client talking to
// it) to an errdefs kind with a public message that never carries the
// daemon's text; the original error is kept as the cause. op is a verb
// ("create", "pause", …) for the message.
func engineErr(op string, err error) error {
	if err == nil {
		return nil
	}
	cause := fmt.Errorf("docker %s: %w", op, err)
	var pub *errdefs.Error
	switch {
	case errors.Is(err, context.Canceled):
		return cause
	case errors.Is(err, context.DeadlineExceeded):
		pub = errdefs.Unavailable(CodeProviderTimeout, "the Docker engine did not answer in time")
	case client.IsErrConnectionFailed(err):
		pub = errdefs.Unavailable(CodeProviderUnavailable, "the Docker engine is not reachable")
	case cerrdefs.IsNotFound(err):
		pub = errdefs.NotFound(CodeSandboxNotFound, "the sandbox's container does not exist")
	case cerrdefs.IsConflict(err), cerrdefs.IsAlreadyExists(err):
		pub = errdefs.Conflict("provider_conflict", "the Docker engine could not %s the sandbox: a conflicting operation is in progress", op)
	case cerrdefs.IsInvalidArgument(err):
		pub = errdefs.InvalidArgument("provider_rejected", "the Docker engine rejected the request to %s the sandbox", op)
	case cerrdefs.IsUnavailable(err):
		pub = errdefs.Unavailable(CodeProviderUnavailable, "the Docker engine is not available")
	case cerrdefs.IsPermissionDenied(err), cerrdefs.IsUnauthorized(err):
		pub = errdefs.FailedPrecondition("provider_refused", "the Docker engine refused to %s the sandbox", op)
	case cerrdefs.IsNotImplemented(err):
		pub = errdefs.NotImplemented("provider_not_implemented", "the Docker engine cannot %s the sandbox", op)
	default:
		pub = errdefs.Unavailable(CodeProviderError, "the Docker engine failed to %s the sandbox", op)
	}
	return pub.WithCause(cause)
}

// notFound is the error for a handle whose container is gone or is not
// paddock's.
func notFound(id string, cause error) error {
	e := errdefs.NotFound(CodeSandboxNotFound, "the sandbox's container does not exist")
	if cause == nil {
		cause = fmt.Errorf("container %s not found", id)
	}
	return e.WithCause(cause)
}

// networkCreateErr maps an error of creating the network name. An engine
// out of address pools says so in a not-found error (20.10: "could not
// find an available, non-overlapping IPv4 address pool"; later: "all
// predefined address pools have been fully subnetted"), which would read
// as a missing sandbox; it is an engine short of room: 503.
func networkCreateErr(name string, err error) error {
	if err != nil && strings.Contains(err.Error(), "address pool") {
		return errdefs.Unavailable(CodeNetworkPoolExhausted,
			"the Docker engine has no address pool left for network %s: remove the networks nothing uses, or give the engine more (default-address-pools in its daemon.json)", name).
			WithCause(fmt.Errorf("docker create network %s: %w", name, err))
	}
	return engineErr("create network "+name+" for", err)
}
