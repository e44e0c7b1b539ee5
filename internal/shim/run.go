package shim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentauth"
)

// RunOptions configure Run.
type RunOptions struct {
	Logger *slog.Logger
	Socket string // unix socket path to serve on
	// KeyFile, when set, names the file holding the sandbox's agent key
	// (see internal/agentauth). Run reads and deletes it before serving,
	// and then serves only connections that prove they hold the key's
	// other end: the control plane's. A missing or unreadable key file is
	// an error.
	KeyFile string
	// TrustFile, when set, names a CA certificate (PEM) every process the
	// shim starts trusts beside the image's roots (see installTrust): the
	// egress proxy's, which brokered secrets need.
	TrustFile string
	Version   string
	// User is Options.User.
	User string
	// Grace is how long processes get to exit after the termination signal
	// is forwarded, before they are killed. 0 means 10 seconds.
	Grace time.Duration
}

// Run is the shim's main loop as a sandbox's init: it starts the reaper,
// serves on the unix socket, and on SIGTERM or SIGINT (or when ctx is done)
// forwards the signal to every process, waits up to the grace period, kills
// what is left, and returns. SIGHUP, SIGUSR1 and SIGUSR2 are forwarded
// without stopping. Every other signal a process sends it is dropped: by
// default SIGQUIT, SIGABRT, SIGSEGV and the like would end a Go program,
// and with it the sandbox.
func Run(ctx context.Context, o RunOptions) error {
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	log := o.Logger
	key, err := protectAndTakeKey(o)
	if err != nil {
		return err
	}
	reaper, err := StartReaper(log)
	if err != nil {
		return err
	}
	defer reaper.Stop()

	l, err := listenSocket(o.Socket, key, log)
	if err != nil {
		return err
	}
	defer os.Remove(o.Socket)
	// Whoever can reach the socket's directory may use it.
	if err := os.Chmod(o.Socket, 0o666); err != nil {
		_ = l.Close()
		return fmt.Errorf("chmod socket: %w", err)
	}

	srv, err := NewServer(Options{Logger: log, Reaper: reaper, Version: o.Version, User: o.User})
	if err != nil {
		_ = l.Close()
		return err
	}
	defer srv.Close()

	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigc)
	// Every other signal is caught, so that it does not take Go's default
	// action, and dropped: nothing reads this channel, and a signal that
	// finds it full is discarded.
	dropped := make(chan os.Signal, 1)
	signal.Notify(dropped)
	defer signal.Stop(dropped)

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, l) }()
	if SudoEnabled() {
		go func() {
			if err := srv.ServeSudo(serveCtx); err != nil {
				log.Error("sudo is not served", "err", err)
			}
		}()
	}
	log.Info("paddock-shim serving", "socket", o.Socket, "pid", os.Getpid(), "version", o.Version)

	term, ended, err := awaitTerm(ctx, log, srv, sigc, served)
	if ended {
		return err
	}
	terminateAll(ctx, log, srv, term, o.Grace)
	stopServing()
	err = <-served
	srv.Close()
	return err
}

// protectAndTakeKey keeps every other process of the sandbox from reading
// this one's memory, takes the agent key from o.KeyFile (nil without one)
// and installs o.TrustFile's trust beside the socket.
func protectAndTakeKey(o RunOptions) (key []byte, err error) {
	// Nothing else in the sandbox may read this process's memory (its key,
	// when it has one) or attach to it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("protect the agent's memory: %w", err)
	}
	if o.KeyFile != "" {
		k, err := agentauth.TakeKeyFile(o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("agent key: %w", err)
		}
		key = k
	}
	if o.TrustFile != "" {
		if err := installTrust(o.TrustFile, filepath.Dir(o.Socket)); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// listenSocket listens on the unix socket path, in place of a stale one,
// and, with a key, admits only connections that prove they hold it.
func listenSocket(path string, key []byte, log *slog.Logger) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if key != nil {
		l = agentauth.NewListener(l, key, log)
	}
	return l, nil
}

// awaitTerm forwards the signals on sigc to srv's processes until ctx ends
// or a SIGTERM or SIGINT comes, which it returns as the signal to end them
// with (SIGTERM when ctx ended). ended says serving ended first, with err.
func awaitTerm(ctx context.Context, log *slog.Logger, srv *Server, sigc <-chan os.Signal, served <-chan error) (term syscall.Signal, ended bool, err error) {
	for {
		select {
		case err := <-served:
			return 0, true, err
		case <-ctx.Done():
			return syscall.SIGTERM, false, nil
		case s := <-sigc:
			sig := s.(syscall.Signal)
			if sig == syscall.SIGTERM || sig == syscall.SIGINT {
				return sig, false, nil
			}
			log.Debug("forwarding signal", "signal", sig)
			for _, p := range srv.procs.running() {
				p.kill(sig)
			}
		}
	}
}

// terminateAll sends term to srv's processes and kills those still running
// after grace.
func terminateAll(ctx context.Context, log *slog.Logger, srv *Server, term syscall.Signal, grace time.Duration) {
	log.Info("shutting down", "signal", term, "grace", grace)
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	left := srv.Terminate(gctx, term)
	cancel()
	if left > 0 {
		log.Warn("killing processes that outlived the grace period", "count", left)
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		srv.Terminate(kctx, syscall.SIGKILL)
		cancel()
	}
}
