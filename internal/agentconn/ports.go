package agentconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// portChunkSize is the most data one Forward message carries.
const portChunkSize = 256 << 10

// ListeningPort is a TCP port something listens on inside a sandbox.
type ListeningPort struct {
	Port int
	// Address is the local address listened on, e.g. "0.0.0.0", "127.0.0.1"
	// or "::".
	Address string
	// PID is the listener's process id in the sandbox; 0 when the agent
	// cannot tell.
	PID int
	// Command is the listener's command name; empty without a PID.
	Command string
}

// ports returns a PortService client on c's connection.
func (c *Client) ports() agentpbconnect.PortServiceClient {
	return agentpbconnect.NewPortServiceClient(&http.Client{Transport: c.transport}, baseURL,
		connect.WithAcceptCompression("gzip", nil, nil),
		connect.WithReadMaxBytes(maxMessageBytes),
		connect.WithSendMaxBytes(maxMessageBytes),
	)
}

// ListPorts returns the TCP ports something listens on inside the sandbox,
// ordered by port, then address (a port listened on over IPv4 and IPv6 is
// listed twice).
func (c *Client) ListPorts(ctx context.Context) ([]ListeningPort, error) {
	res, err := c.ports().List(ctx, connect.NewRequest(&agentpb.ListPortsRequest{}))
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ListeningPort, 0, len(res.Msg.Ports))
	for _, p := range res.Msg.Ports {
		out = append(out, ListeningPort{Port: int(p.Port), Address: p.Address, PID: int(p.Pid), Command: p.Command})
	}
	return out, nil
}

// DialPort connects to a TCP port on the sandbox's loopback (127.0.0.1, or
// ::1 when nothing listens there) through the agent, so the sandbox needs
// no network. A port nobody listens on is an errdefs.ErrUnavailable with
// the code "port_not_listening".
//
// As with net.Dialer.DialContext, ctx bounds the dial only; the connection
// lasts until it is closed or the sandbox side closes it. It is a net.Conn
// whose addresses are synthetic loopback addresses, with CloseWrite to
// half-close it. Reads return io.EOF once the sandbox side has closed.
// Deadlines are honoured; a write deadline that passes while a write waits
// for the sandbox side to take data ends the connection, since the agent
// link cannot take back half a message.
func (c *Client) DialPort(ctx context.Context, port int) (net.Conn, error) {
	if port < 1 || port > 65535 {
		return nil, errdefs.InvalidArgument("invalid_port", "port %d is not in 1..65535", port)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stream := c.ports().Forward(sctx)
	pc := &portConn{
		stream: stream,
		cancel: cancel,
		local:  &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)},
		remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port},
		data:   make(chan []byte),
		pumped: make(chan struct{}),
		closed: make(chan struct{}),
		rdl:    newDeadline(),
		wdl:    newDeadline(),
	}
	// The HTTP/2 transport notices a cancelled call only once its request
	// side ends (see Exec), so ending the dial ends that side too.
	stopDial := context.AfterFunc(ctx, func() {
		cancel()
		pc.closeRequest()
	})
	// A send error is only EOF; the reason comes from the receive below.
	_ = stream.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Start{Start: &agentpb.ForwardStart{Port: uint32(port)}}})
	msg, err := stream.Receive()
	if !stopDial() || ctx.Err() != nil {
		pc.shutdown(false)
		return nil, fmt.Errorf("dial port %d: %w", port, ctx.Err())
	}
	if err != nil {
		pc.shutdown(false)
		if errors.Is(err, io.EOF) {
			return nil, protocolError("forward ended before it connected")
		}
		return nil, mapError(err)
	}
	connected := msg.GetConnected()
	if connected == nil {
		pc.shutdown(false)
		return nil, protocolError("first forward event is %T, not Connected", msg.GetEvent())
	}
	if ap, err := netip.ParseAddrPort(connected.Address); err == nil {
		pc.remote = net.TCPAddrFromAddrPort(ap)
	}
	go pc.pump()
	return pc, nil
}

// portConn is a forwarded connection: one Forward call. A goroutine (pump)
// receives the sandbox side's data and hands it to Read one message at a
// time, which keeps the agent link's flow control in force.
type portConn struct {
	stream        *connect.BidiStreamForClient[agentpb.ForwardRequest, agentpb.ForwardResponse]
	cancel        context.CancelFunc
	local, remote net.Addr

	writeMu     sync.Mutex // one Write or CloseWrite at a time
	sendMu      sync.Mutex // Send and CloseRequest
	requestDone bool       // under sendMu: the request side is closed

	data    chan []byte   // from pump to Read
	pumped  chan struct{} // closed when pump returns
	recvErr error         // why pump returned; set before pumped closes
	readMu  sync.Mutex    // one Read at a time
	buf     []byte        // under readMu: data not read yet

	rdl, wdl *deadline

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	abortMu   sync.Mutex
	abortErr  error // under abortMu: why the connection was broken off
}

var _ net.Conn = (*portConn)(nil)

// pump receives the sandbox side's data until the call ends.
func (c *portConn) pump() {
	defer close(c.pumped)
	for {
		msg, err := c.stream.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.recvErr = io.EOF
			} else {
				c.recvErr = mapError(err)
			}
			return
		}
		if msg.GetConnected() != nil {
			c.recvErr = protocolError("a second Connected event")
			return
		}
		d := msg.GetData()
		if len(d) == 0 {
			continue
		}
		select {
		case c.data <- d:
		case <-c.closed:
			return
		}
	}
}

func (c *portConn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	for len(c.buf) == 0 {
		if err := c.broken(); err != nil {
			return 0, c.opError("read", err)
		}
		if isClosed(c.rdl.wait()) {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		select {
		case b := <-c.data:
			c.buf = b
		case <-c.pumped:
			if err := c.broken(); err != nil {
				return 0, c.opError("read", err)
			}
			if c.recvErr == io.EOF {
				return 0, io.EOF
			}
			return 0, c.opError("read", c.recvErr)
		case <-c.closed:
		case <-c.rdl.wait():
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *portConn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.broken(); err != nil {
		return 0, c.opError("write", err)
	}
	if isClosed(c.wdl.wait()) {
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	// A send blocks while the sandbox side does not read. Only ending the
	// call unblocks it, so a deadline that passes meanwhile does that.
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-stop:
		case <-c.wdl.wait():
			c.abort(os.ErrDeadlineExceeded)
		}
	}()
	defer func() {
		close(stop)
		<-watched
	}()
	for off := 0; off < len(p); off += portChunkSize {
		end := min(off+portChunkSize, len(p))
		if err := c.send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Data{Data: p[off:end]}}); err != nil {
			return off, c.opError("write", err)
		}
	}
	return len(p), nil
}

// CloseWrite half-closes the connection: the sandbox side reads
// end-of-file and may still answer. Like shutdown(2) on a TCP socket whose
// peer has closed, it succeeds once the sandbox side has closed too.
func (c *portConn) CloseWrite() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.broken(); err != nil {
		return c.opError("close", err)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.requestDone {
		return nil
	}
	c.requestDone = true
	err := c.stream.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_CloseWrite{CloseWrite: true}})
	_ = c.stream.CloseRequest()
	if err != nil {
		if berr := c.broken(); berr != nil {
			return c.opError("close", berr)
		}
	}
	return nil
}

// send sends one message unless the request side is closed.
func (c *portConn) send(m *agentpb.ForwardRequest) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.requestDone {
		return syscall.EPIPE // after CloseWrite
	}
	if err := c.stream.Send(m); err != nil {
		return c.sendError(err)
	}
	return nil
}

// sendError says why a send failed: the connection was closed or broken
// off here, or the call has ended.
func (c *portConn) sendError(err error) error {
	if berr := c.broken(); berr != nil {
		return berr
	}
	return errdefs.Unavailable("connection_closed", "the connection in the sandbox has ended").WithCause(err)
}

// closeRequest ends the request side, unless CloseWrite has.
func (c *portConn) closeRequest() {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if !c.requestDone {
		c.requestDone = true
		_ = c.stream.CloseRequest()
	}
}

// Close ends the call, which closes the connection inside the sandbox, and
// waits for the receiving goroutine.
func (c *portConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.shutdown(true)
	})
	return nil
}

// shutdown ends the call: cancelling it, then closing the response side,
// which aborts the HTTP/2 stream and so unblocks a send waiting for flow
// control, then the request side.
func (c *portConn) shutdown(pumping bool) {
	c.cancel()
	_ = c.stream.CloseResponse()
	c.closeRequest()
	if pumping {
		<-c.pumped
	}
	c.rdl.set(time.Time{})
	c.wdl.set(time.Time{})
}

// abort breaks the connection off: every operation fails with err from now
// on. Close must still be called.
func (c *portConn) abort(err error) {
	c.abortMu.Lock()
	if c.abortErr == nil {
		c.abortErr = err
	}
	c.abortMu.Unlock()
	c.cancel()
	_ = c.stream.CloseResponse()
}

// broken returns why the connection can no longer be used, if it was
// closed or broken off here.
func (c *portConn) broken() error {
	if isClosed(c.closed) {
		return net.ErrClosed
	}
	c.abortMu.Lock()
	defer c.abortMu.Unlock()
	return c.abortErr
}

func (c *portConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

func (c *portConn) LocalAddr() net.Addr  { return c.local }
func (c *portConn) RemoteAddr() net.Addr { return c.remote }

func (c *portConn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

func (c *portConn) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return nil
}

func (c *portConn) SetWriteDeadline(t time.Time) error {
	c.wdl.set(t)
	return nil
}

// deadline is a settable deadline whose channel closes when it passes (as
// net.Pipe's): the channel is replaced only once closed, so a waiter keeps
// following deadlines set while it waits.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{}
}

func newDeadline() *deadline { return &deadline{cancel: make(chan struct{})} }

// set moves the deadline to t; the zero time means none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired: wait for it to close the channel
	}
	d.timer = nil
	closed := isClosed(d.cancel)
	if t.IsZero() {
		if closed {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.cancel = make(chan struct{})
		}
		ch := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !closed {
		close(d.cancel)
	}
}

// wait returns a channel closed once the deadline has passed.
func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
