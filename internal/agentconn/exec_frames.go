package agentconn

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// maxExecConns is how many framed exec connections a client has open at
// once, in calls or kept between them: as many as calls it usually has at
// once. A call beyond them goes by ProcessService.Exec, on the client's
// HTTP/2 connection.
const maxExecConns = 4

// execConn is a connection of Exec's framed path (agentpb.ExecFramesPath).
type execConn struct {
	conn   net.Conn
	br     *bufio.Reader
	reused bool // it carried a call before this one
	once   sync.Once
	// raw is the socket under conn, looked at without reading while the
	// connection is kept (see keep); nil when conn is not one of this
	// process's sockets, or is TLS.
	raw syscall.RawConn
	// watch, with raw, looks at the connection every keptWatch while it
	// is kept (watchKept); it is stopped otherwise.
	watch *time.Timer
	// idle, while a connection without raw is kept, has the first read's
	// outcome (see keep): nil once the agent's next answer begins, the
	// connection's end if the agent closed it meanwhile.
	idle chan error
}

// keptWatch is how often a kept connection with a socket to look at is
// looked at between calls, for an agent that closed it; a call looks at
// it before it is sent on it too.
const keptWatch = 5 * time.Second

// Unwrapper is a connection that passes every byte through, unchanged, to
// the one it wraps (a provider's bookkeeping around an agent's socket).
// The framed path looks through it at the socket.
type Unwrapper interface {
	Unwrap() net.Conn
}

// rawSocket is the socket under conn, seen through Unwrappers: nil for
// anything but a unix or TCP socket of this process (TLS, whose records
// may come while a connection is idle, and other libraries' streams).
func rawSocket(conn net.Conn) syscall.RawConn {
	for {
		switch c := conn.(type) {
		case *net.UnixConn, *net.TCPConn:
			rc, err := c.(syscall.Conn).SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		case Unwrapper:
			conn = c.Unwrap()
		default:
			return nil
		}
	}
}

// errOutOfTurn: a kept connection had bytes the agent sent between calls.
var errOutOfTurn = errors.New("the agent spoke on a kept connection between calls")

// quiet looks at a kept connection without waiting and without reading:
// nil when nothing came on it, its end when the agent closed it, and
// errOutOfTurn when the agent sent anything. It needs raw.
func (ec *execConn) quiet() error {
	if ec.br.Buffered() > 0 {
		return errOutOfTurn
	}
	var (
		b   [1]byte
		n   int
		err error
	)
	cerr := ec.raw.Read(func(fd uintptr) bool {
		n, _, err = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return true // never wait
	})
	switch {
	case cerr != nil:
		return cerr
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return nil
	case err != nil:
		return err
	case n == 0:
		return io.EOF
	}
	return errOutOfTurn
}

// execConns keeps the framed path's connections between calls.
type execConns struct {
	mu     sync.Mutex
	idle   []*execConn
	open   int  // connections dialed and not yet closed
	absent bool // the agent has no framed path: Exec uses ProcessService.Exec
	shut   bool // Client.Close was called: no connection is kept from now on
	// watch is how often a kept connection with a socket to look at is
	// looked at: keptWatch, but in tests.
	watch time.Duration
}

// execConn returns a kept connection, or dials a new one. served is false
// when the call is to go by ProcessService.Exec: the agent has no framed
// path, or has not been given its environment (WithEnvRequired), or the
// client has maxExecConns open already.
func (c *Client) execConn(ctx context.Context, fresh bool) (ec *execConn, served bool, err error) {
	p := &c.execs
	p.mu.Lock()
	// One the agent closed while it was kept has left the set (keep), or
	// is seen closed here, before a call is sent on it.
	for n := len(p.idle); n > 0 && !fresh; n = len(p.idle) {
		ec = p.idle[n-1]
		p.idle = p.idle[:n-1]
		if ec.raw != nil {
			ec.watch.Stop()
			if ec.quiet() != nil {
				p.mu.Unlock()
				c.closed(ec)
				p.mu.Lock()
				continue
			}
		}
		p.mu.Unlock()
		ec.reused = true
		return ec, true, nil
	}
	if p.absent || p.open >= maxExecConns {
		p.mu.Unlock()
		return nil, false, nil
	}
	p.open++
	p.mu.Unlock()

	conn, err := c.dialBytes(ctx)
	if err != nil {
		c.closed(nil)
		return nil, true, mapError(err)
	}
	ec = &execConn{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), raw: rawSocket(conn)}
	if e := ec; e.raw != nil {
		e.watch = time.AfterFunc(c.execs.watch, func() { c.watchKept(e) })
		e.watch.Stop() // until it is kept
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	hdr, upgraded, err := upgrade(conn, ec.br, agentpb.ExecFramesPath, agentpb.ExecFramesUpgrade)
	if !stop() {
		err = context.Cause(ctx)
	}
	switch {
	case err != nil:
		c.closed(ec)
		return nil, true, bytesLinkError(ctx, err)
	case !upgraded:
		c.closed(ec)
		p.mu.Lock()
		p.absent = true
		p.mu.Unlock()
		return nil, false, nil
	case c.envRequired && hdr.Get(agentpb.ExecFramesEnvHeader) != "set":
		// The agent restarted and has not had its environment again: the
		// call goes by Exec, whose connection's dial gives it one first.
		c.closed(ec)
		return nil, false, nil
	}
	return ec, true, nil
}

// keep returns a connection whose call ended cleanly to the idle set.
// The agent closing a kept connection (a restart, a stop) is seen, on any
// transport, and the connection closed, before a call is sent on it:
//
//   - on a socket of this process (unix, or TCP without TLS), the
//     connection is looked at without reading, by the call that takes it
//     and every keptWatch while it waits (quiet), so that a call's answer
//     is read by the call itself;
//   - on any other transport it is read while it waits, as an idle HTTP
//     connection is: the read waits for the next answer's first byte and
//     hands its outcome to that call's first read.
func (c *Client) keep(ec *execConn) {
	var read chan error
	if ec.raw == nil {
		read = make(chan error, 1)
		ec.idle = read
	}
	p := &c.execs
	p.mu.Lock()
	if p.shut {
		p.mu.Unlock()
		c.closed(ec)
		return
	}
	p.idle = append(p.idle, ec)
	if ec.raw != nil {
		ec.watch.Reset(p.watch)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	go func() {
		_, err := ec.br.Peek(1)
		p.mu.Lock()
		i := slices.Index(p.idle, ec)
		if i >= 0 { // still kept: the agent closed it, or spoke out of turn
			p.idle = slices.Delete(p.idle, i, i+1)
		}
		p.mu.Unlock()
		// Last: the call this wakes may end, and keep ec again, at once;
		// this read is then through with the idle set.
		read <- err
		if i >= 0 {
			c.closed(ec)
		}
	}()
}

// watchKept looks at ec, kept with a socket to look at, and closes it
// when the agent closed it or spoke on it; else it looks again after
// keptWatch. A call that took ec meanwhile leaves it alone.
func (c *Client) watchKept(ec *execConn) {
	p := &c.execs
	p.mu.Lock()
	i := slices.Index(p.idle, ec)
	if i < 0 {
		p.mu.Unlock()
		return
	}
	if ec.quiet() == nil {
		ec.watch.Reset(p.watch)
		p.mu.Unlock()
		return
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	p.mu.Unlock()
	c.closed(ec)
}

// closed closes ec, once, and counts it out; nil counts out a connection
// whose dial failed.
func (c *Client) closed(ec *execConn) {
	if ec == nil {
		c.execs.mu.Lock()
		c.execs.open--
		c.execs.mu.Unlock()
		return
	}
	ec.once.Do(func() {
		if ec.watch != nil {
			ec.watch.Stop()
		}
		_ = ec.conn.Close()
		c.closed(nil)
	})
}

// closeIdleExecs closes the kept connections; with shut, a call that
// ends later closes its connection too, rather than keeping it.
func (c *Client) closeIdleExecs(shut bool) {
	p := &c.execs
	p.mu.Lock()
	p.shut = p.shut || shut
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, ec := range idle {
		c.closed(ec)
	}
}

// execFramed starts a call on the framed path: a process without stdin
// or a terminal (Exec sends the others by ProcessService.Exec). served is
// false when the call is to go by ProcessService.Exec instead.
func (c *Client) execFramed(ctx context.Context, start *agentpb.ExecRequest) (es *ExecStream, served bool, err error) {
	b, err := proto.Marshal(start)
	if err != nil || len(b) > agentpb.ExecFrameMax {
		return nil, false, nil // Exec refuses it as it refuses any message too large
	}
	for fresh := false; ; fresh = true {
		ec, served, err := c.execConn(ctx, fresh)
		if !served || err != nil {
			return nil, served, err
		}
		sctx, cancel := context.WithCancel(ctx)
		fc := &framedCall{c: c, ec: ec, ctx: sctx}
		es = &ExecStream{cancel: cancel, recv: fc.recv, send: fc.send, closeS: fc.closeSend, closeR: fc.release}
		// A call the caller gives up closes its connection: the agent
		// sees it end, ends the call and kills a foreground process. A
		// close under way when the call ends otherwise still leaves the
		// connection unfit to keep.
		stop := context.AfterFunc(sctx, fc.abort)
		es.stopWatch = func() bool {
			if stop() {
				return true
			}
			fc.broken.Store(true)
			return false
		}
		werr := agentpb.WriteFrame(ec.conn, b)
		if werr != nil {
			fc.broken.Store(true)
			err = bytesLinkError(sctx, werr)
		} else {
			err = es.started()
		}
		if err == nil {
			return es, true, nil
		}
		es.Close()
		switch {
		case werr != nil && ec.reused && ctx.Err() == nil:
			// A kept connection the agent closed while it was idle (it
			// restarted, or stopped): the start was not sent, so the call
			// is made again on a new connection. A start sent is never
			// sent again, even on a connection that broke before an
			// answer: the agent may have started the process.
			continue
		case ec.reused && !fc.answered && fc.broken.Load():
			// The same, seen only by the read: the others kept meanwhile
			// are likely gone too.
			c.closeIdleExecs(false)
		}
		return nil, true, err
	}
}

// framedCall is one call on a framed exec connection.
type framedCall struct {
	c   *Client
	ec  *execConn
	ctx context.Context

	mu       sync.Mutex  // held while the answer is read
	answered bool        // a frame of the agent's came
	ended    bool        // the agent's last frame came
	over     atomic.Bool // ended, for send
	endErr   error       // what the call ended with after its exit
	sentEnd  bool        // the client's empty frame went
	broken   atomic.Bool
}

func (f *framedCall) recv() (*agentpb.ExecResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read()
}

// read reads the agent's next frame; f.mu is held.
func (f *framedCall) read() (*agentpb.ExecResponse, error) {
	if f.ended {
		if f.endErr != nil {
			return nil, f.endErr
		}
		return nil, io.EOF
	}
	var err error
	if f.ec.idle != nil { // the kept connection's read has the answer's start
		err = <-f.ec.idle
		f.ec.idle = nil
	}
	var b []byte
	if err == nil {
		b, err = agentpb.ReadFrame(f.ec.br, agentpb.ExecFrameMax+1)
	}
	if err != nil {
		f.broken.Store(true)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the call's end is a frame of its own
		}
		return nil, bytesLinkError(f.ctx, err)
	}
	f.answered = true
	if len(b) == 0 {
		f.broken.Store(true)
		return nil, protocolError("an empty frame on the framed exec path")
	}
	switch b[0] {
	case agentpb.ExecFrameEvent:
		msg := new(agentpb.ExecResponse)
		if err := proto.Unmarshal(b[1:], msg); err != nil {
			f.broken.Store(true)
			return nil, protocolError("a framed exec event: %v", err)
		}
		if msg.GetExited() != nil {
			// The call's end follows the exit at once. It is read with
			// it, so the connection is free for the next call once the
			// exit is seen, and needs no wait of its own in Close.
			if end, err := f.read(); end != nil {
				f.broken.Store(true)
				f.ended, f.endErr = true, protocolError("an event after the exit")
			} else if !f.ended {
				f.ended, f.endErr = true, err
			} else if err != io.EOF {
				f.endErr = err
			}
			f.over.Store(true)
		}
		return msg, nil
	case agentpb.ExecFrameEnd:
		f.ended = true
		f.over.Store(true)
		return nil, io.EOF
	case agentpb.ExecFrameFailed:
		f.ended = true
		f.over.Store(true)
		return nil, frameError(b[1:])
	}
	f.broken.Store(true)
	return nil, protocolError("a framed exec frame of kind %d", b[0])
}

// send and closeSend are called under ExecStream.sendMu.
func (f *framedCall) send(m *agentpb.ExecRequest) error {
	if f.over.Load() || f.broken.Load() {
		return io.EOF // the call has ended, as a stream's send says
	}
	switch m.GetMsg().(type) {
	case *agentpb.ExecRequest_Stdin, *agentpb.ExecRequest_CloseStdin:
		// A framed call's process has no stdin, where the agent drops
		// what is written to it; the framed path takes none.
		return nil
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return nil // an empty message would read as the request side's end
	}
	if err := agentpb.WriteFrame(f.ec.conn, b); err != nil {
		f.broken.Store(true)
		return err
	}
	return nil
}

func (f *framedCall) closeSend() error {
	if err := agentpb.WriteFrame(f.ec.conn, nil); err != nil {
		f.broken.Store(true)
		return err
	}
	f.sentEnd = true
	return nil
}

// abort ends the call by closing its connection.
func (f *framedCall) abort() {
	f.broken.Store(true)
	f.c.closed(f.ec)
}

// release ends the call's use of its connection (ExecStream.Close, after
// closeSend): kept for the next call when the call is over on both sides,
// closed otherwise, which ends the call in the agent.
func (f *framedCall) release() error {
	if !f.mu.TryLock() {
		// A Recv is under way: closing the connection ends it.
		f.abort()
		return nil
	}
	defer f.mu.Unlock()
	if f.ended && f.sentEnd && !f.broken.Load() {
		f.c.keep(f.ec)
		return nil
	}
	f.abort()
	return nil
}
