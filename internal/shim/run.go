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
	"github.com/paddockhq/paddock/internal/agentpb"
)

// RunOptions configure Run.
type RunOptions struct {
	Logger *slog.Logger
	// Socket is the unix socket path to serve on; "" serves on none.
	Socket string
	// Listen is a TCP address to serve on ("" serves on none): TLS with
	// both ends pinned to certificates derived from the key, then the
	// handshake (agentauth.ListenTLS). It needs KeyFile.
	Listen string
	// KeyFile, when set, names the file holding the sandbox's agent key
	// (see internal/agentauth). Run reads and deletes it before serving,
	// and then serves only connections that prove they hold the key's
	// other end: the control plane's. A missing or unreadable key file is
	// an error.
	KeyFile string
	// RunDir is the directory the agent writes its own files to (the
	// trust bundle of TrustFile); "" means the socket's directory.
	RunDir string
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

// check validates o and fills in its defaults.
func (o *RunOptions) check() error {
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Socket == "" && o.Listen == "" {
		return errors.New("nothing to serve on: give a unix socket, a TCP address or both")
	}
	if o.Listen != "" && o.KeyFile == "" {
		return errors.New("serving on TCP needs the agent key (a key file): without it anyone who reaches the port would drive the sandbox")
	}
	if o.RunDir == "" && o.Socket != "" {
		o.RunDir = filepath.Dir(o.Socket)
	}
	if o.TrustFile != "" && o.RunDir == "" {
		return errors.New("trust: the agent has no run directory to write the CA bundle to: give one (or a unix socket, whose directory it uses)")
	}
	return nil
}

// Run is the shim's main loop as a sandbox's init: it starts the reaper,
// serves on the unix socket and the TCP address, and on SIGTERM or SIGINT
// (or when ctx is done) forwards the signal to every process, waits up to
// the grace period, kills what is left, and returns. SIGHUP, SIGUSR1 and
// SIGUSR2 are forwarded without stopping. Every other signal a process
// sends it is dropped: by default SIGQUIT, SIGABRT, SIGSEGV and the like
// would end a Go program, and with it the sandbox.
func Run(ctx context.Context, o RunOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	log := o.Logger
	key, err := protectAndTakeKey(o)
	if err != nil {
		return err
	}
	reserveThreads(agentpb.AgentThreads)
	reaper, err := StartReaper(log)
	if err != nil {
		return err
	}
	defer reaper.Stop()

	// The signals are caught before the socket is made: once a client can
	// reach the agent, no signal takes Go's default action on it.
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigc)
	// Every other signal is caught, so that it does not take Go's default
	// action, and dropped: nothing reads this channel, and a signal that
	// finds it full is discarded.
	dropped := make(chan os.Signal, 1)
	signal.Notify(dropped)
	defer signal.Stop(dropped)

	ls, closeAll, err := listenAll(o, key, log)
	if err != nil {
		return err
	}
	defer closeAll()

	srv, err := NewServer(Options{Logger: log, Reaper: reaper, Version: o.Version, User: o.User})
	if err != nil {
		return err
	}
	defer srv.Close()

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, len(ls))
	for _, l := range ls {
		go func() { served <- srv.Serve(serveCtx, l) }()
	}
	if SudoEnabled() {
		go func() {
			if err := srv.ServeSudo(serveCtx); err != nil {
				log.Error("sudo is not served", "err", err)
			}
		}()
	}
	log.Info("paddock-shim serving", "socket", o.Socket, "listen", o.Listen, "uid", os.Geteuid(), "pid", os.Getpid(), "version", o.Version)

	term, ended, err := awaitTerm(ctx, log, srv, sigc, served)
	if !ended {
		terminateAll(ctx, log, srv, term, o.Grace)
	}
	stopServing()
	for range len(ls) - 1 {
		err = errors.Join(err, <-served)
	}
	if !ended {
		err = errors.Join(err, <-served)
	}
	srv.Close()
	return err
}

// protectAndTakeKey keeps every other process of the sandbox from reading
// this one's memory, takes the agent key from o.KeyFile (nil without one)
// and installs o.TrustFile's trust in the run directory.
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
		if err := installTrust(o.TrustFile, o.RunDir); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// listenAll listens on o's unix socket and TCP address, each it names,
// and returns the listeners and what closes them and removes the socket.
func listenAll(o RunOptions, key []byte, log *slog.Logger) ([]net.Listener, func(), error) {
	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			_ = l.Close()
		}
		if o.Socket != "" {
			_ = os.Remove(o.Socket)
		}
	}
	if o.Socket != "" {
		l, err := listenSocket(o.Socket, key, log)
		if err != nil {
			return nil, nil, err
		}
		ls = append(ls, l)
		// Whoever can reach the socket's directory may use it.
		if err := os.Chmod(o.Socket, 0o666); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("chmod socket: %w", err)
		}
	}
	if o.Listen != "" {
		l, err := listenTCP(o.Listen, key, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		ls = append(ls, l)
	}
	return ls, closeAll, nil
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

// listenTCP listens on the TCP address addr for the control plane of key
// (agentauth.ListenTLS): a peer that does not hold the key cannot finish
// TLS.
func listenTCP(addr string, key []byte, log *slog.Logger) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	tl, err := agentauth.ListenTLS(l, key, log)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	return streamListener{tl}, nil
}

// streamListener hides what kind of connection its listener accepts. TLS
// is only the link's tunnel: inside it the agent protocol is the same
// HTTP/2 with prior knowledge as on the unix socket, and net/http, shown
// a *tls.Conn, would speak what TLS negotiated (no ALPN: HTTP/1.1).
type streamListener struct{ net.Listener }

func (l streamListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return struct{ net.Conn }{c}, nil
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
