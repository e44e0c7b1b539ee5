package agentconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// kinds maps the agent's Connect codes to paddock's error kinds, with the
// public code used when the agent sent no reason.
var kinds = map[connect.Code]struct {
	kind error
	code string
}{
	connect.CodeNotFound:           {errdefs.ErrNotFound, "agent_not_found"},
	connect.CodeInvalidArgument:    {errdefs.ErrInvalidArgument, "agent_invalid_argument"},
	connect.CodeOutOfRange:         {errdefs.ErrInvalidArgument, "agent_out_of_range"},
	connect.CodeAlreadyExists:      {errdefs.ErrConflict, "agent_already_exists"},
	connect.CodeAborted:            {errdefs.ErrConflict, "agent_aborted"},
	connect.CodeFailedPrecondition: {errdefs.ErrFailedPrecondition, "agent_failed_precondition"},
	connect.CodePermissionDenied:   {errdefs.ErrPermissionDenied, "agent_permission_denied"},
	connect.CodeUnauthenticated:    {errdefs.ErrUnauthenticated, "agent_unauthenticated"},
	connect.CodeResourceExhausted:  {errdefs.ErrResourceExhausted, "agent_resource_exhausted"},
	connect.CodeUnimplemented:      {errdefs.ErrNotImplemented, "agent_not_implemented"},
	connect.CodeUnavailable:        {errdefs.ErrUnavailable, "agent_unavailable"},
}

// ErrAgentInternal is wrapped by errors the agent reports as internal; they
// have no public kind and their text is not for clients.
var ErrAgentInternal = errors.New("agent internal error")

// mapError turns an error from a call into paddock's taxonomy.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var pub *errdefs.Error
	if errors.As(err, &pub) || errors.Is(err, ErrAgentInternal) {
		return err
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return errdefs.Unavailable("agent_unavailable", "the sandbox agent is unreachable").WithCause(err)
	}
	switch ce.Code() {
	case connect.CodeCanceled:
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("agent call: %w", context.Canceled)
		}
		// The agent's side ended the call (a stream reset, an answer
		// "canceled"), not the caller: the agent became unreachable.
		return errdefs.Unavailable("agent_unavailable", "the sandbox agent is unreachable").WithCause(err)
	case connect.CodeDeadlineExceeded:
		return fmt.Errorf("agent call: %w", context.DeadlineExceeded)
	}
	if ce.Code() == connect.CodeInternal && linkBroken(err) {
		return errdefs.Unavailable("agent_unavailable", "the sandbox agent is unreachable").WithCause(err)
	}
	k, ok := kinds[ce.Code()]
	if !ok {
		return fmt.Errorf("%w: %w", ErrAgentInternal, err)
	}
	// Only the agent's own errors (those with an ErrorInfo) carry a message
	// meant for people; others come from the transport.
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		if info, ok := v.(*agentpb.ErrorInfo); ok && info.Reason != "" {
			return &errdefs.Error{Kind: k.kind, Code: info.Reason, Message: ce.Message(), Cause: err}
		}
	}
	msg := "the sandbox agent refused the request"
	if ce.Code() == connect.CodeUnavailable {
		msg = "the sandbox agent is unreachable"
	}
	return &errdefs.Error{Kind: k.kind, Code: k.code, Message: msg, Cause: err}
}

// linkBroken reports whether err is the link to the agent breaking under
// a call — a read cut off mid-message, the connection closed or reset, as
// when the sandbox is paused, stopped or reset meanwhile — which connect
// reports as an internal error of the stream: the agent became
// unreachable, it did not fail.
func linkBroken(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &op)
}

// protocolError reports a message the agent should not have sent.
func protocolError(format string, args ...any) error {
	return errdefs.Unavailable("agent_protocol_error", "the sandbox agent sent an unexpected message").
		WithCause(fmt.Errorf(format, args...))
}
