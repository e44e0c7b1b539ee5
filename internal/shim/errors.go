package shim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"syscall"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// errKind is the shim's side of the error taxonomy; each maps to one
// Connect code.
type errKind int

const (
	kindInternal errKind = iota
	kindInvalid
	kindNotFound
	kindExists
	kindPermission
	kindFailedPrecondition
	kindResourceExhausted
	kindUnimplemented
	kindUnavailable
)

var kindCodes = map[errKind]connect.Code{
	kindInternal:           connect.CodeInternal,
	kindInvalid:            connect.CodeInvalidArgument,
	kindNotFound:           connect.CodeNotFound,
	kindExists:             connect.CodeAlreadyExists,
	kindPermission:         connect.CodePermissionDenied,
	kindFailedPrecondition: connect.CodeFailedPrecondition,
	kindResourceExhausted:  connect.CodeResourceExhausted,
	kindUnimplemented:      connect.CodeUnimplemented,
	kindUnavailable:        connect.CodeUnavailable,
}

// rpcError is an error with a public face: msg and reason are sent to the
// client, cause is only logged.
type rpcError struct {
	kind    errKind
	reason  string // stable machine code, e.g. "file_not_found"
	subject string // path or process id, if any
	msg     string
	cause   error
}

func (e *rpcError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.reason, e.msg, e.cause)
	}
	return e.reason + ": " + e.msg
}

func (e *rpcError) Unwrap() error { return e.cause }

func errInvalid(reason, format string, args ...any) *rpcError {
	return &rpcError{kind: kindInvalid, reason: reason, msg: fmt.Sprintf(format, args...)}
}

func errNotFound(reason, subject, format string, args ...any) *rpcError {
	return &rpcError{kind: kindNotFound, reason: reason, subject: subject, msg: fmt.Sprintf(format, args...)}
}

func errPermission(reason, subject, format string, args ...any) *rpcError {
	return &rpcError{kind: kindPermission, reason: reason, subject: subject, msg: fmt.Sprintf(format, args...)}
}

func errPrecondition(reason, subject, format string, args ...any) *rpcError {
	return &rpcError{kind: kindFailedPrecondition, reason: reason, subject: subject, msg: fmt.Sprintf(format, args...)}
}

// fsError maps a filesystem error about path to a public error.
func fsError(op, path string, err error) error {
	var re *rpcError
	if errors.As(err, &re) {
		return err
	}
	e := &rpcError{kind: kindInternal, reason: "io_error", subject: path,
		msg: fmt.Sprintf("%s %s failed", op, path), cause: err}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errno = syscall.ENOENT
		case errors.Is(err, fs.ErrExist):
			errno = syscall.EEXIST
		case errors.Is(err, fs.ErrPermission):
			errno = syscall.EACCES
		}
	}
	switch errno {
	case syscall.ENOENT:
		e.kind, e.reason, e.msg = kindNotFound, "file_not_found", fmt.Sprintf("%s: no such file or directory", path)
	case syscall.EEXIST:
		e.kind, e.reason, e.msg = kindExists, "file_exists", fmt.Sprintf("%s: already exists", path)
	case syscall.EACCES, syscall.EPERM:
		e.kind, e.reason, e.msg = kindPermission, "permission_denied", fmt.Sprintf("%s %s: permission denied", op, path)
	case syscall.ENOTDIR:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "not_a_directory", fmt.Sprintf("%s: a path component is not a directory", path)
	case syscall.EISDIR:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "is_a_directory", fmt.Sprintf("%s: is a directory", path)
	case syscall.ENOTEMPTY:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "directory_not_empty", fmt.Sprintf("%s: directory not empty", path)
	case syscall.EROFS:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "read_only_filesystem", fmt.Sprintf("%s: read-only file system", path)
	case syscall.ENOSPC, syscall.EDQUOT:
		e.kind, e.reason, e.msg = kindResourceExhausted, "no_space", fmt.Sprintf("%s: no space left on device", path)
	case syscall.ELOOP:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "too_many_symlinks", fmt.Sprintf("%s: too many levels of symbolic links", path)
	case syscall.ENAMETOOLONG:
		e.kind, e.reason, e.msg = kindInvalid, "invalid_path", fmt.Sprintf("%s: name too long", path)
	case syscall.EXDEV:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "cross_device", fmt.Sprintf("%s: crosses file systems", path)
	case syscall.EBUSY:
		e.kind, e.reason, e.msg = kindFailedPrecondition, "busy", fmt.Sprintf("%s: device or resource busy", path)
	case syscall.EINVAL:
		e.kind, e.reason, e.msg = kindInvalid, "invalid_argument", fmt.Sprintf("%s %s: invalid argument", op, path)
	}
	return e
}

// toConnect turns any error into the Connect error sent to the client,
// logging the internal cause.
func toConnect(log *slog.Logger, procedure string, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return connect.NewError(connect.CodeCanceled, errors.New("canceled"))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("deadline exceeded"))
	}
	var re *rpcError
	if !errors.As(err, &re) {
		re = &rpcError{kind: kindInternal, reason: "internal", msg: "internal error", cause: err}
	}
	if re.kind == kindInternal {
		log.Warn("request failed", "procedure", procedure, "reason", re.reason, "err", err)
	} else {
		log.Debug("request refused", "procedure", procedure, "reason", re.reason, "err", err)
	}
	out := connect.NewError(kindCodes[re.kind], errors.New(re.msg))
	if d, derr := connect.NewErrorDetail(&agentpb.ErrorInfo{Reason: re.reason, Subject: re.subject}); derr == nil {
		out.AddDetail(d)
	}
	return out
}
