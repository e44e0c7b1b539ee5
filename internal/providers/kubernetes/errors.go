package kubernetes

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Codes this provider puts on its public errors; those it shares with the
// Docker provider have the same values.
const (
	CodeImageNotFound            = "image_not_found"
	CodeSandboxNotFound          = "sandbox_not_found"
	CodeSandboxExists            = "sandbox_exists"
	CodeSandboxExited            = "sandbox_exited"
	CodeSandboxUnschedulable     = "sandbox_unschedulable"
	CodeSandboxFailed            = "sandbox_failed"
	CodeAgentNotReady            = "agent_not_ready"
	CodeAgentUnavailable         = "agent_unavailable"
	CodeAgentUnverified          = "agent_unverified"
	CodeInvalidHandle            = "invalid_handle"
	CodeUserNotSupported         = "user_not_supported"
	CodeWritableRootNotSupported = "writable_root_not_supported"
	CodePauseNotSupported        = "pause_not_supported"
	CodeWorkspaceInUse           = "workspace_in_use"
	CodeWorkspaceForeign         = "workspace_not_managed"
	CodeWorkspaceRemoving        = "workspace_being_removed"
	CodeProviderUnavailable      = "provider_unavailable"
	CodeProviderTimeout          = "provider_timeout"
	CodeProviderError            = "provider_error"
	CodeInvalidSpec              = provider.CodeInvalidSpec
)

// apiErr maps an error from the API server to an errdefs kind with a
// public message that never carries the server's text; the original
// error is kept as the cause. op is a verb phrase ("create the Pod of").
func apiErr(op string, err error) error {
	if err == nil {
		return nil
	}
	cause := fmt.Errorf("kubernetes: %s the sandbox: %w", op, err)
	var pub *errdefs.Error
	switch {
	case errors.Is(err, context.Canceled):
		return cause
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		pub = errdefs.Unavailable(CodeProviderTimeout, "the cluster did not answer in time")
	case apierrors.IsNotFound(err):
		pub = errdefs.NotFound(CodeSandboxNotFound, "the sandbox's Pod does not exist")
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		pub = errdefs.Conflict("provider_conflict", "the cluster could not %s the sandbox: a conflicting operation is in progress", op)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		pub = errdefs.InvalidArgument("provider_rejected", "the cluster rejected the request to %s the sandbox", op)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		pub = errdefs.FailedPrecondition("provider_refused", "the cluster refused to %s the sandbox", op)
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err):
		pub = errdefs.Unavailable(CodeProviderUnavailable, "the cluster is not available")
	default:
		pub = errdefs.Unavailable(CodeProviderError, "the cluster failed to %s the sandbox", op)
	}
	return pub.WithCause(cause)
}

// notFound is the error for a handle whose Pod is gone or is not
// paddock's.
func notFound(pod string, cause error) error {
	e := errdefs.NotFound(CodeSandboxNotFound, "the sandbox's Pod does not exist")
	if cause == nil {
		cause = fmt.Errorf("pod %s not found", pod)
	}
	return e.WithCause(cause)
}
