package shim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// Defaults for Options.
const (
	DefaultOutputBuffer = 1 << 20
	DefaultMaxExited    = 64
)

// maxMessageBytes bounds one protocol message; data travels in chunks far
// smaller than this.
const maxMessageBytes = 4 << 20

// Options configure a Server.
type Options struct {
	Logger *slog.Logger // required
	Reaper *Reaper      // required: the process's one reaper
	// Version is reported by Health.
	Version string
	// OutputBuffer is how many bytes of each output stream are kept per
	// process; 0 means DefaultOutputBuffer.
	OutputBuffer int
	// MaxExited is how many exited background processes stay listed; 0
	// means DefaultMaxExited.
	MaxExited int
	// Clock defaults to the system clock.
	Clock Clock
	// User is the account processes run as and files are written as
	// unless a call names another: "user" or "root". "" means the agent's
	// own identity (see ownAccount). An account the agent cannot become
	// is an error (see agentUser).
	User string
	// TerminalGrace is how long a terminal whose call broke waits to be
	// re-attached; 0 means DefaultTerminalGrace.
	TerminalGrace time.Duration
}

// Server serves the agent protocol (see api/agent/v1) over HTTP/2
// cleartext, plus GET /healthz for readiness probes.
type Server struct {
	log       *slog.Logger
	version   string
	startedAt time.Time
	procs     *manager
	terms     *terminals
	env       injectedEnv
	mux       *http.ServeMux
	user      string      // Options.User
	fileUser  sandboxUser // who files are read and written as

	quit     chan struct{} // closed by Close: ends every streaming call
	quitOnce sync.Once
	wg       sync.WaitGroup // goroutines serving calls
}

// NewServer returns a Server with every service registered.
func NewServer(opts Options) (*Server, error) {
	if opts.Logger == nil || opts.Reaper == nil {
		return nil, errors.New("shim: Options.Logger and Options.Reaper are required")
	}
	if opts.OutputBuffer <= 0 {
		opts.OutputBuffer = DefaultOutputBuffer
	}
	if opts.MaxExited <= 0 {
		opts.MaxExited = DefaultMaxExited
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.TerminalGrace <= 0 {
		opts.TerminalGrace = DefaultTerminalGrace
	}
	// Whether the agent may act as another account is read here, on a
	// thread that never dropped the capabilities to (see canSwitchUsers).
	_ = canSwitchUsers()
	fileUser, err := agentUser(opts.User, "")
	if err != nil {
		return nil, fmt.Errorf("shim: %w", err)
	}
	s := &Server{
		log:       opts.Logger,
		version:   opts.Version,
		startedAt: opts.Clock.Now(),
		procs:     newManager(opts.Logger, opts.Reaper, opts.Clock, opts.OutputBuffer, opts.MaxExited),
		mux:       http.NewServeMux(),
		quit:      make(chan struct{}),
		user:      opts.User,
		fileUser:  fileUser,
	}
	s.terms = newTerminals(s.procs, opts.Clock, opts.TerminalGrace)
	hopts := []connect.HandlerOption{
		connect.WithInterceptors(errorInterceptor{log: opts.Logger}),
		connect.WithReadMaxBytes(maxMessageBytes),
		connect.WithSendMaxBytes(maxMessageBytes),
		connect.WithCompression("gzip", nil, nil), // a local socket gains nothing from it
	}
	s.mux.Handle(agentpbconnect.NewAgentServiceHandler(&agentService{s: s}, hopts...))
	s.mux.Handle(agentpbconnect.NewProcessServiceHandler(&processService{s: s}, hopts...))
	// Files are read and written as the default user: what it may not
	// touch the API may not either, and what the API writes is its own.
	s.mux.Handle(agentpbconnect.NewFileServiceHandler(&fileService{s: s},
		append(slices.Clip(hopts), connect.WithInterceptors(userInterceptor{user: fileUser}))...))
	s.mux.Handle(agentpbconnect.NewTerminalServiceHandler(&terminalService{s: s}, hopts...))
	s.mux.Handle(agentpbconnect.NewPortServiceHandler(&portService{s: s}, hopts...))
	s.registerEnvd(hopts)
	s.mux.HandleFunc("POST "+agentpb.WriteBytesPath, s.serveWriteBytes)
	s.mux.HandleFunc("POST "+agentpb.ExecFramesPath, s.serveExecFrames)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return s, nil
}

// Handler returns the server's HTTP handler (it needs HTTP/2 for the
// bidirectional calls).
func (s *Server) Handler() http.Handler { return s.mux }

// Serve serves on l until ctx is done, then ends every call, shuts the
// listener down and returns. It does not stop processes; see Terminate and
// Close.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{
		Handler:           s.mux,
		Protocols:         &p,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          1000,
			MaxReceiveBufferPerConnection: 16 << 20,
			MaxReceiveBufferPerStream:     4 << 20,
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.endCalls()
	// Every call ends at once now; give their last frames a moment, then
	// close whatever connection the client has not closed itself.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 250*time.Millisecond)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		err = hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// endCalls makes every streaming call return.
func (s *Server) endCalls() { s.quitOnce.Do(func() { close(s.quit) }) }

// Terminate forwards sig to every process the shim started (their whole
// groups; as PID 1, to every process in the sandbox) and waits until they
// have exited or ctx is done. It returns how many were still running.
func (s *Server) Terminate(ctx context.Context, sig syscall.Signal) int {
	if os.Getpid() == 1 {
		_ = syscall.Kill(-1, sig)
	}
	for _, p := range s.procs.running() {
		p.kill(sig)
	}
	for {
		running := s.procs.running()
		if len(running) == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return len(running)
		case <-running[0].exitCh:
		}
	}
}

// Close kills every process the shim started, ends every call and waits for
// the server's goroutines. Call it before stopping the Reaper.
func (s *Server) Close() {
	s.endCalls()
	s.procs.close()
	s.wg.Wait()
	s.terms.close()
}

// agentService implements AgentService.
type agentService struct{ s *Server }

var _ agentpbconnect.AgentServiceHandler = (*agentService)(nil)

func (h *agentService) Health(ctx context.Context, req *connect.Request[agentpb.HealthRequest]) (*connect.Response[agentpb.HealthResponse], error) {
	return connect.NewResponse(&agentpb.HealthResponse{
		Version:           h.s.version,
		Pid:               int32(os.Getpid()),
		StartedAtUnixNano: h.s.startedAt.UnixNano(),
	}), nil
}

// userInterceptor runs each call as user (see asUser).
type userInterceptor struct{ user sandboxUser }

func (i userInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (res connect.AnyResponse, err error) {
		err = asUser(i.user, func() error {
			res, err = next(ctx, req)
			return err
		})
		return res, err
	}
}

func (i userInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i userInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return asUser(i.user, func() error { return next(ctx, conn) })
	}
}

// errorInterceptor turns every handler error into a Connect error with an
// ErrorInfo detail, logging internal causes.
type errorInterceptor struct{ log *slog.Logger }

func (i errorInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err != nil {
			return nil, toConnect(i.log, req.Spec().Procedure, err)
		}
		return res, nil
	}
}

func (i errorInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i errorInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return toConnect(i.log, conn.Spec().Procedure, next(ctx, conn))
	}
}
