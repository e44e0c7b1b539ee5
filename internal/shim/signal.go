package shim

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentpb"
)

var signals = map[agentpb.Signal]syscall.Signal{
	agentpb.Signal_SIGNAL_HUP:   syscall.SIGHUP,
	agentpb.Signal_SIGNAL_INT:   syscall.SIGINT,
	agentpb.Signal_SIGNAL_QUIT:  syscall.SIGQUIT,
	agentpb.Signal_SIGNAL_KILL:  syscall.SIGKILL,
	agentpb.Signal_SIGNAL_USR1:  syscall.SIGUSR1,
	agentpb.Signal_SIGNAL_USR2:  syscall.SIGUSR2,
	agentpb.Signal_SIGNAL_TERM:  syscall.SIGTERM,
	agentpb.Signal_SIGNAL_CONT:  syscall.SIGCONT,
	agentpb.Signal_SIGNAL_STOP:  syscall.SIGSTOP,
	agentpb.Signal_SIGNAL_TSTP:  syscall.SIGTSTP,
	agentpb.Signal_SIGNAL_WINCH: syscall.SIGWINCH,
}

// toSignal maps a protocol signal to Linux's.
func toSignal(s agentpb.Signal) (syscall.Signal, error) {
	sig, ok := signals[s]
	if !ok {
		return 0, errInvalid("invalid_signal", "unknown signal %d", int32(s))
	}
	return sig, nil
}

// exitedMessage describes a wait status.
func exitedMessage(ws syscall.WaitStatus) *agentpb.Exited {
	e := &agentpb.Exited{ExitCode: int32(ws.ExitStatus())}
	if ws.Signaled() {
		e.ExitCode = -1
		e.Signal = int32(ws.Signal())
		e.SignalName = unix.SignalName(ws.Signal())
	}
	return e
}
