package agentconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
)

func TestMapError(t *testing.T) {
	withReason := func(code connect.Code, reason, msg string) error {
		e := connect.NewError(code, errors.New(msg))
		d, err := connect.NewErrorDetail(&agentpb.ErrorInfo{Reason: reason})
		if err != nil {
			t.Fatal(err)
		}
		e.AddDetail(d)
		return e
	}
	tests := []struct {
		name     string
		in       error
		kind     error
		code     string
		msg      string
		internal bool
		ctxErr   error
	}{
		{name: "reason carried", in: withReason(connect.CodeNotFound, "file_not_found", "/x: no such file"), kind: errdefs.ErrNotFound, code: "file_not_found", msg: "/x: no such file"},
		{name: "already exists", in: withReason(connect.CodeAlreadyExists, "file_exists", "m"), kind: errdefs.ErrConflict, code: "file_exists", msg: "m"},
		{name: "precondition", in: withReason(connect.CodeFailedPrecondition, "is_a_directory", "m"), kind: errdefs.ErrFailedPrecondition, code: "is_a_directory", msg: "m"},
		{name: "permission", in: withReason(connect.CodePermissionDenied, "permission_denied", "m"), kind: errdefs.ErrPermissionDenied, code: "permission_denied", msg: "m"},
		{name: "exhausted", in: withReason(connect.CodeResourceExhausted, "no_space", "m"), kind: errdefs.ErrResourceExhausted, code: "no_space", msg: "m"},
		{name: "no reason keeps transport text private", in: connect.NewError(connect.CodeUnavailable, errors.New("dial unix /secret/path: refused")), kind: errdefs.ErrUnavailable, code: "agent_unavailable", msg: "the sandbox agent is unreachable"},
		{name: "invalid without reason", in: connect.NewError(connect.CodeInvalidArgument, errors.New("x")), kind: errdefs.ErrInvalidArgument, code: "agent_invalid_argument", msg: "the sandbox agent refused the request"},
		{name: "internal", in: withReason(connect.CodeInternal, "io_error", "read failed"), internal: true},
		{name: "unknown", in: connect.NewError(connect.CodeUnknown, errors.New("?")), internal: true},
		{name: "stream cut mid-message", in: connect.NewError(connect.CodeInternal, fmt.Errorf("protocol error: incomplete envelope: %w", io.ErrUnexpectedEOF)), kind: errdefs.ErrUnavailable, code: "agent_unavailable", msg: "the sandbox agent is unreachable"},
		{name: "link closed under a stream", in: connect.NewError(connect.CodeInternal, fmt.Errorf("protocol error: incomplete envelope: %w", &net.OpError{Op: "read", Net: "unix", Err: net.ErrClosed})), kind: errdefs.ErrUnavailable, code: "agent_unavailable", msg: "the sandbox agent is unreachable"},
		{name: "canceled", in: connect.NewError(connect.CodeCanceled, fmt.Errorf("c: %w", context.Canceled)), ctxErr: context.Canceled},
		{name: "canceled by the agent's side", in: connect.NewError(connect.CodeCanceled, errors.New("stream error: stream ID 3; CANCEL; received from peer")), kind: errdefs.ErrUnavailable, code: "agent_unavailable", msg: "the sandbox agent is unreachable"},
		{name: "deadline", in: connect.NewError(connect.CodeDeadlineExceeded, errors.New("d")), ctxErr: context.DeadlineExceeded},
		{name: "plain network error", in: &net.OpError{Op: "dial", Err: errors.New("refused")}, kind: errdefs.ErrUnavailable, code: "agent_unavailable", msg: "the sandbox agent is unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mapError(tt.in)
			switch {
			case tt.internal:
				if !errors.Is(err, ErrAgentInternal) || errdefs.KindOf(err) != nil {
					t.Fatalf("got %v (kind %v), want an internal error", err, errdefs.KindOf(err))
				}
			case tt.ctxErr != nil:
				if !errors.Is(err, tt.ctxErr) {
					t.Fatalf("got %v, want %v", err, tt.ctxErr)
				}
			default:
				pub, ok := errdefs.Public(err)
				if !ok || !errors.Is(err, tt.kind) || pub.Code != tt.code || pub.Message != tt.msg {
					t.Fatalf("got %#v, want kind %v code %q message %q", err, tt.kind, tt.code, tt.msg)
				}
			}
		})
	}
	if mapError(nil) != nil {
		t.Fatal("nil mapped to an error")
	}
}

func TestUnreachable(t *testing.T) {
	c := New(func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", "/nonexistent/agent.sock")
	})
	defer c.Close()
	err := c.Health(t.Context())
	if pub, ok := errdefs.Public(err); !ok || !errors.Is(err, errdefs.ErrUnavailable) || pub.Code != "agent_unavailable" {
		t.Fatalf("got %v", err)
	}
	_, err = c.Exec(t.Context(), ExecRequest{Argv: []string{"true"}})
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("exec: got %v", err)
	}
	_, err = c.ReadFile(t.Context(), "/x")
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("read: got %v", err)
	}
}

// TestDialErrorKept checks that a dial function's own public error (a
// provider saying why the sandbox cannot be reached) comes through as is.
func TestDialErrorKept(t *testing.T) {
	want := errdefs.Unavailable("sandbox_paused", "the sandbox is paused")
	c := New(func(ctx context.Context) (net.Conn, error) { return nil, want })
	defer c.Close()
	err := c.Health(t.Context())
	if pub, ok := errdefs.Public(err); !ok || pub.Code != "sandbox_paused" {
		t.Fatalf("got %v", err)
	}
}
