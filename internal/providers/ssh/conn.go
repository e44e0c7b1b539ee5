package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Conn is the one SSH connection to a machine that every operation of its
// provider goes over: commands run in sessions of it, and the engine's and
// the agents' unix sockets are dialled through it (direct-streamlocal). It
// is made on first use and made again when the link drops: a keepalive
// every KeepAlive notices a link that stopped answering, and the next
// operation dials anew. It is safe for concurrent use.
type Conn struct {
	addr      string
	cfg       *ssh.ClientConfig
	signers   [][]ssh.Signer // the keys each auth method offers
	keepAlive time.Duration
	logger    *slog.Logger

	mu     sync.Mutex
	cl     *ssh.Client
	gone   chan struct{} // closed when cl's connection ends
	closed bool
	wg     sync.WaitGroup // the watch and keepalive of each connection
}

// NewConn returns a Conn to addr (host:port) made with cfg, logging in
// with signer; it does not dial until it is used.
func NewConn(addr string, cfg *ssh.ClientConfig, signer ssh.Signer, keepAlive time.Duration, logger *slog.Logger) *Conn {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Conn{addr: addr, cfg: cfg, signers: [][]ssh.Signer{{signer}}, keepAlive: keepAlive, logger: logger}
}

// client returns the live connection, dialling one if there is none.
func (c *Conn) client(ctx context.Context) (*ssh.Client, chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errdefs.Unavailable(CodeUnreachable, "the connection to the machine is closed")
	}
	if c.cl != nil {
		select {
		case <-c.gone:
			c.cl = nil
		default:
			return c.cl, c.gone, nil
		}
	}
	cl, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	gone := make(chan struct{})
	c.cl, c.gone = cl, gone
	c.wg.Add(2)
	go func() { // the connection's watch: it ends with the connection
		defer c.wg.Done()
		err := cl.Wait()
		close(gone)
		c.logger.Info("the ssh connection to the machine ended", "addr", c.addr, "err", err)
	}()
	go func() {
		defer c.wg.Done()
		c.keepalive(cl, gone)
	}()
	return cl, gone, nil
}

// dial makes a new SSH connection, bounded by ctx and the config's
// timeout.
func (c *Conn) dial(ctx context.Context) (*ssh.Client, error) {
	d := net.Dialer{Timeout: c.cfg.Timeout}
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, errdefs.Unavailable(CodeUnreachable, "the machine %s cannot be reached", c.addr).WithCause(err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	} else if c.cfg.Timeout > 0 {
		_ = nc.SetDeadline(time.Now().Add(c.cfg.Timeout))
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	cfg, loggingIn := c.watchedConfig()
	sc, chans, reqs, err := ssh.NewClientConn(nc, c.addr, cfg)
	stop()
	if err != nil {
		_ = nc.Close()
		return nil, handshakeErr(c.addr, cfg.User, loggingIn(), err)
	}
	_ = nc.SetDeadline(time.Time{})
	c.logger.Info("connected to the machine over ssh", "addr", c.addr)
	return ssh.NewClient(sc, chans, reqs), nil
}

// watchedConfig is the client configuration for one dial, and whether
// that dial got as far as offering the key: the host key was accepted and
// the login began.
func (c *Conn) watchedConfig() (*ssh.ClientConfig, func() bool) {
	cfg := *c.cfg
	var offered atomic.Bool
	auth := make([]ssh.AuthMethod, 0, len(cfg.Auth))
	for _, signers := range c.signers {
		auth = append(auth, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			offered.Store(true)
			return signers, nil
		}))
	}
	cfg.Auth = auth
	return &cfg, offered.Load
}

// handshakeErr says why the SSH handshake with addr failed: a host key
// refused (unknown or changed), or a login refused once the key was
// offered.
func handshakeErr(addr, user string, loggingIn bool, err error) error {
	var hk *hostKeyError
	if errors.As(err, &hk) {
		return hk.public(addr)
	}
	if loggingIn {
		return errdefs.FailedPrecondition(CodeAuthFailed, "the machine %s did not let %s log in with the configured key", addr, user).WithCause(err)
	}
	return errdefs.Unavailable(CodeUnreachable, "the ssh handshake with %s failed", addr).WithCause(err)
}

// keepalive asks the server to answer every keepAlive; a link that does
// not answer within keepAlive is closed, so the next operation dials.
func (c *Conn) keepalive(cl *ssh.Client, gone chan struct{}) {
	if c.keepAlive <= 0 {
		return
	}
	t := time.NewTicker(c.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-gone:
			return
		case <-t.C:
		}
		answered := make(chan error, 1)
		go func() {
			_, _, err := cl.SendRequest("keepalive@openssh.com", true, nil)
			answered <- err
		}()
		select {
		case <-gone:
			return
		case err := <-answered:
			if err == nil {
				continue
			}
		case <-time.After(c.keepAlive):
		}
		c.logger.Warn("the ssh connection to the machine stopped answering; closing it", "addr", c.addr)
		_ = cl.Close()
		return
	}
}

// ranOnce is an error of an operation that may have acted on the
// machine before the link failed: retry does not run it again.
type ranOnce struct{ error }

func (e ranOnce) Unwrap() error { return e.error }

// retry runs op on the live connection; when the connection turns out to
// be dead (it ended before or during op), op runs once more on a new one.
// A link lost on the last try, or once op may have acted, is unavailable.
func (c *Conn) retry(ctx context.Context, op func(*ssh.Client, <-chan struct{}) error) error {
	err := c.try(ctx, op)
	if err != nil && isConnErr(err) && ctx.Err() == nil {
		return errdefs.Unavailable(CodeUnreachable, "the connection to the machine %s was lost", c.addr).WithCause(err)
	}
	return err
}

func (c *Conn) try(ctx context.Context, op func(*ssh.Client, <-chan struct{}) error) error {
	var err error
	for range 2 {
		cl, gone, cerr := c.client(ctx)
		if cerr != nil {
			return cerr
		}
		if err = op(cl, gone); err == nil {
			return nil
		}
		var ran ranOnce
		if errors.As(err, &ran) {
			return ran.error
		}
		select {
		case <-gone:
		default:
			if !isConnErr(err) {
				return err
			}
			_ = cl.Close() // a link that failed an operation: the next one dials
			<-gone
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

// isConnErr reports whether err says the SSH connection itself failed.
func isConnErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, errLinkGone)
}

// errLinkGone: the connection ended while an operation waited on it.
var errLinkGone = errors.New("the ssh connection ended")

// openErr says why a channel (a session, a socket) could not be opened.
// The machine refusing it (*ssh.OpenChannelError) is its answer; any other
// failure is the link's: x/crypto/ssh ends a channel opened on a dying
// connection with "unexpected packet … <nil>", or with the write's error,
// before the connection's Wait returns.
func openErr(err error) error {
	var refused *ssh.OpenChannelError
	if err == nil || errors.As(err, &refused) || errors.Is(err, errLinkGone) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", errLinkGone, err)
}

// await runs fn, and returns its result, or errLinkGone once the
// connection has ended (gone), or ctx's error, whichever comes first. A
// channel opened on a connection that is ending may never be answered
// (x/crypto/ssh adds it after its last sweep of the connection's
// channels), so no operation waits on one alone. What fn returns after
// await gave up is handed to drop.
func await[T any](ctx context.Context, gone <-chan struct{}, fn func() (T, error), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	var mu sync.Mutex
	abandoned := false
	go func() {
		v, err := fn()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				drop(v)
			}
			return
		}
		ch <- result{v, err}
	}()
	var zero T
	var err error
	select {
	case r := <-ch:
		return r.v, r.err
	case <-gone:
		err = errLinkGone
	case <-ctx.Done():
		err = ctx.Err()
	}
	mu.Lock()
	abandoned = true
	mu.Unlock()
	select {
	case r := <-ch: // it came as we gave up
		if r.err == nil {
			drop(r.v)
		}
	default:
	}
	return zero, err
}

// Run runs argv on the machine in a session of its own, with stdin as its
// input, and returns its standard output. Each word is quoted for the
// remote shell.
func (c *Conn) Run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	var out, errOut bytes.Buffer
	cmd := quoteArgs(argv)
	var exitErr error
	err := c.retry(ctx, func(cl *ssh.Client, gone <-chan struct{}) error {
		s, err := await(ctx, gone, cl.NewSession, func(s *ssh.Session) { _ = s.Close() })
		if err != nil {
			return openErr(err)
		}
		defer s.Close()
		out.Reset()
		errOut.Reset()
		s.Stdout, s.Stderr = &out, &errOut
		if stdin != nil {
			s.Stdin = bytes.NewReader(stdin)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run(cmd) }()
		// From here the command may have run: a link lost now fails the
		// call rather than running the command a second time.
		select {
		case err := <-done:
			var ee *ssh.ExitError
			if errors.As(err, &ee) {
				exitErr = err // the command's own failure, not the link's
				return nil
			}
			return ranOnce{err}
		case <-gone:
			_ = s.Close()
			<-done
			return ranOnce{errLinkGone}
		case <-ctx.Done():
			_ = s.Signal(ssh.SIGKILL)
			_ = s.Close()
			<-done
			return ctx.Err()
		}
	})
	if err == nil {
		err = exitErr
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s on the machine: %w: %s", argv[0], err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}

// DialUnix connects to the unix socket at path on the machine. The
// connection supports deadlines (an SSH channel does not: it is bridged
// through a pipe that does).
func (c *Conn) DialUnix(ctx context.Context, path string) (net.Conn, error) {
	var ch net.Conn
	err := c.retry(ctx, func(cl *ssh.Client, gone <-chan struct{}) error {
		var err error
		ch, err = await(ctx, gone, func() (net.Conn, error) { return cl.Dial("unix", path) }, func(c net.Conn) { _ = c.Close() })
		return openErr(err)
	})
	if err != nil {
		return nil, err
	}
	return bridge(ch), nil
}

// Close closes the connection and waits for its goroutines.
func (c *Conn) Close() error {
	return c.close(true)
}

// Hangup closes the live connection, if there is one; unlike Close, the
// next operation dials again.
func (c *Conn) Hangup() error {
	return c.close(false)
}

func (c *Conn) close(forGood bool) error {
	c.mu.Lock()
	if forGood {
		c.closed = true
	}
	cl := c.cl
	c.cl = nil
	c.mu.Unlock()
	var err error
	if cl != nil {
		err = cl.Close()
	}
	if forGood {
		c.wg.Wait()
	}
	return err
}

// quoteArgs joins argv into one command line for a POSIX shell, each word
// single-quoted.
func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// bridge returns a connection with deadlines that carries ch's bytes both
// ways; closing either ends both.
func bridge(ch net.Conn) net.Conn {
	local, remote := net.Pipe()
	var once sync.Once
	closeBoth := func() { once.Do(func() { _ = ch.Close(); _ = remote.Close() }) }
	go func() { _, _ = io.Copy(remote, ch); closeBoth() }()
	go func() { _, _ = io.Copy(ch, remote); closeBoth() }()
	return local
}
