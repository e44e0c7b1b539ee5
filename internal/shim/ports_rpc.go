package shim

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

const (
	// portChunkSize is the most data one Forward message carries.
	portChunkSize = 256 << 10
	// portDialTimeout bounds each connection attempt on the loopback, where
	// a listener answers at once unless its backlog is full.
	portDialTimeout = 3 * time.Second
	// tcpListen is the kernel's TCP_LISTEN state in /proc/net/tcp.
	tcpListen = "0A"
)

// portService implements PortService.
type portService struct{ s *Server }

var _ agentpbconnect.PortServiceHandler = (*portService)(nil)

// Forward connects to a port on the loopback and copies bytes both ways:
// the client's messages to the connection in a goroutine, the connection's
// bytes to the client in this one. The call ends when the sandbox side
// closes (end-of-file), the client goes away or breaks the protocol, or the
// server shuts down; the connection is closed then.
func (h *portService) Forward(ctx context.Context, stream *connect.BidiStream[agentpb.ForwardRequest, agentpb.ForwardResponse]) error {
	first, err := stream.Receive()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errInvalid("missing_start", "the first message must be a start")
		}
		return err
	}
	start := first.GetStart()
	if start == nil {
		return errInvalid("missing_start", "the first message must be a start")
	}
	port, err := checkPort(start.Port)
	if err != nil {
		return err
	}
	conn, err := dialLoopback(ctx, port)
	if err != nil {
		return err
	}
	defer conn.Close()

	ctx, cancel := context.WithCancelCause(ctx)
	// Whatever ends the call closes the connection, which ends a read or a
	// write blocked on it.
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
		case <-h.s.quit:
			cancel(errShuttingDown)
		}
		conn.Close()
	}()
	defer func() {
		cancel(nil)
		<-watched
	}()

	if err := stream.Send(&agentpb.ForwardResponse{Event: &agentpb.ForwardResponse_Connected{
		Connected: &agentpb.ForwardConnected{Address: conn.RemoteAddr().String()},
	}}); err != nil {
		return err
	}
	// The receiving goroutine ends at the request stream's end, or once
	// this call returns (its Receive fails then).
	h.s.wg.Go(func() {
		if err := forwardIn(stream, conn); err != nil {
			cancel(err)
		}
	})
	buf := make([]byte, portChunkSize)
	for {
		n, rerr := conn.Read(buf)
		if n > 0 {
			if err := stream.Send(&agentpb.ForwardResponse{Event: &agentpb.ForwardResponse_Data{Data: buf[:n]}}); err != nil {
				return err
			}
		}
		if rerr == nil {
			continue
		}
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		return connectionError(rerr)
	}
}

// forwardIn writes the client's data to conn until the request stream
// ends, half-closing conn's write side at close_write or the stream's end.
// It returns an error only when the client broke the protocol or the
// connection failed.
func forwardIn(stream *connect.BidiStream[agentpb.ForwardRequest, agentpb.ForwardResponse], conn *net.TCPConn) error {
	writeClosed := false
	for {
		msg, err := stream.Receive()
		if err != nil {
			// A clean end of the request stream is a half-close; any other
			// error means the call is over, which its context tells.
			if errors.Is(err, io.EOF) && !writeClosed {
				_ = conn.CloseWrite()
			}
			return nil
		}
		switch m := msg.GetMsg().(type) {
		case *agentpb.ForwardRequest_Data:
			if writeClosed {
				return errInvalid("write_after_close", "data after close_write")
			}
			if len(m.Data) > portChunkSize {
				return errInvalid("chunk_too_large", "a data chunk holds %d bytes, more than %d", len(m.Data), portChunkSize)
			}
			if _, err := conn.Write(m.Data); err != nil {
				if errors.Is(err, net.ErrClosed) {
					return nil // the call is ending
				}
				return connectionError(err)
			}
		case *agentpb.ForwardRequest_CloseWrite:
			if m.CloseWrite && !writeClosed {
				writeClosed = true
				_ = conn.CloseWrite()
			}
		case *agentpb.ForwardRequest_Start:
			return errInvalid("duplicate_start", "only the first message may be a start")
		}
	}
}

// checkPort validates a port number from a request.
func checkPort(p uint32) (int, error) {
	if p == 0 || p > 65535 {
		return 0, &rpcError{kind: kindInvalid, reason: "invalid_port", subject: strconv.FormatUint(uint64(p), 10),
			msg: fmt.Sprintf("port %d is not in 1..65535", p)}
	}
	return int(p), nil
}

// dialLoopback connects to port on 127.0.0.1, or on ::1 when nothing
// listens on the IPv4 loopback.
func dialLoopback(ctx context.Context, port int) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: portDialTimeout}
	conn, err4 := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err4 == nil {
		return conn.(*net.TCPConn), nil
	}
	if !notListening(err4) {
		return nil, dialError(ctx, port, err4)
	}
	conn, err6 := d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", strconv.Itoa(port)))
	if err6 == nil {
		return conn.(*net.TCPConn), nil
	}
	if notListening(err6) {
		return nil, &rpcError{kind: kindUnavailable, reason: "port_not_listening", subject: strconv.Itoa(port),
			msg: fmt.Sprintf("nothing listens on port %d in the sandbox", port), cause: errors.Join(err4, err6)}
	}
	return nil, dialError(ctx, port, errors.Join(err4, err6))
}

// notListening tells a refused connection, or a loopback address the
// sandbox does not have (IPv6 disabled), from other failures.
func notListening(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.EADDRNOTAVAIL, syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.EAFNOSUPPORT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// dialError maps a connection attempt that neither succeeded nor was
// refused.
func dialError(ctx context.Context, port int, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return &rpcError{kind: kindUnavailable, reason: "port_unreachable", subject: strconv.Itoa(port),
		msg: fmt.Sprintf("port %d in the sandbox does not answer", port), cause: err}
}

// connectionError maps an error on an established connection.
func connectionError(err error) error {
	return &rpcError{kind: kindUnavailable, reason: "connection_reset",
		msg: "the connection in the sandbox failed", cause: err}
}

func (h *portService) List(ctx context.Context, req *connect.Request[agentpb.ListPortsRequest]) (*connect.Response[agentpb.ListPortsResponse], error) {
	ports, err := listeningPorts("/proc")
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentpb.ListPortsResponse{Ports: ports}), nil
}

// listeningPorts reads the listening TCP sockets of the agent's network
// namespace from proc's net/tcp and net/tcp6 and finds, where it may, the
// process holding each.
func listeningPorts(proc string) ([]*agentpb.ListeningPort, error) {
	var ports []*agentpb.ListeningPort
	byInode := map[uint64][]*agentpb.ListeningPort{}
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join(proc, "net", name)
		b, err := os.ReadFile(path)
		if err != nil {
			if name == "tcp6" && errors.Is(err, fs.ErrNotExist) {
				continue // a kernel without IPv6
			}
			return nil, fsError("read", path, err)
		}
		for p, inode := range parseListeners(b) {
			ports = append(ports, p)
			if inode != 0 {
				byInode[inode] = append(byInode[inode], p)
			}
		}
	}
	socketOwners(proc, byInode)
	slices.SortFunc(ports, func(a, b *agentpb.ListeningPort) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(a.Address, b.Address))
	})
	return ports, nil
}

// parseListeners yields the sockets in state LISTEN of a /proc/net/tcp or
// tcp6 table, with their inodes. Lines it cannot parse are skipped.
func parseListeners(table []byte) func(yield func(*agentpb.ListeningPort, uint64) bool) {
	return func(yield func(*agentpb.ListeningPort, uint64) bool) {
		sc := bufio.NewScanner(bytes.NewReader(table))
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
			f := strings.Fields(sc.Text())
			if len(f) < 10 || f[3] != tcpListen {
				continue
			}
			host, portHex, ok := strings.Cut(f[1], ":")
			if !ok {
				continue
			}
			addr, ok := parseProcAddr(host)
			if !ok {
				continue
			}
			port, err := strconv.ParseUint(portHex, 16, 16)
			if err != nil || port == 0 {
				continue
			}
			inode, _ := strconv.ParseUint(f[9], 10, 64)
			if !yield(&agentpb.ListeningPort{Port: uint32(port), Address: addr.String()}, inode) {
				return
			}
		}
	}
}

// parseProcAddr decodes an address as /proc/net/tcp prints it: the hex of
// each 32-bit word of the address in the kernel's byte order.
func parseProcAddr(s string) (netip.Addr, bool) {
	raw, err := hex.DecodeString(s)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, false
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(ip)
	return addr, true
}

// socketOwners fills in the pid and command of the sockets in byInode by
// looking through every process's open files (lowest pid first, so a
// listener shared by a parent and its forked workers is the parent's).
// Processes it may not inspect are passed over.
func socketOwners(proc string, byInode map[uint64][]*agentpb.ListeningPort) {
	if len(byInode) == 0 {
		return
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	for _, pid := range pids {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		// Another user's process: only its owner may look.
		var targets []string
		if err := asProcessOwner(pid, true, func() error {
			fds, err := os.ReadDir(filepath.Join(dir, "fd"))
			for _, fd := range fds {
				if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil {
					targets = append(targets, target)
				}
			}
			return err
		}); err != nil {
			continue
		}
		var command string
		for _, target := range targets {
			num, ok := strings.CutPrefix(target, "socket:[")
			if !ok {
				continue
			}
			inode, err := strconv.ParseUint(strings.TrimSuffix(num, "]"), 10, 64)
			if err != nil {
				continue
			}
			ports, ok := byInode[inode]
			if !ok {
				continue
			}
			if command == "" {
				if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
					command = strings.TrimSpace(string(b))
				}
			}
			for _, p := range ports {
				p.Pid, p.Command = int32(pid), command
			}
			delete(byInode, inode)
			if len(byInode) == 0 {
				return
			}
		}
	}
}
