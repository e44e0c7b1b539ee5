package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// maxWriteHeaderBytes bounds the byte path's header frame: a path and
// three options.
const maxWriteHeaderBytes = 64 << 10

// serveWriteBytes serves Write's byte path (agentpb.WriteBytesPath): the
// same write as FileService.Write, with the same checks, as the same user,
// through the same temporary file, but its data moved from the socket into
// the file by the kernel (splice, where the connection is a unix socket)
// rather than copied through HTTP/2's buffers and protobuf messages by the
// agent, which runs inside the sandbox's CPU limit.
func (s *Server) serveWriteBytes(w http.ResponseWriter, r *http.Request) {
	conn, brw, release, ok := s.upgrade(w, r, agentpb.WriteBytesUpgrade, "")
	if !ok {
		return
	}
	defer release()
	src := &byteSource{buf: brw.Reader, conn: conn}
	var info *agentpb.FileInfo
	err := asUser(s.fileUser, func() (err error) {
		info, err = writeBytes(src)
		return err
	})
	if abandoned(err) {
		s.log.Debug("a byte-path write ended before its end frame", "err", err)
		return
	}
	_ = agentpb.WriteFrame(conn, s.writeBytesAnswer(info, err))
}

// upgrade takes an upgrade request's connection over for protocol name,
// answering 101 with the extra header lines given (each ending in CRLF).
// The connection is closed when the server closes, and by release, which
// the caller must call once done with it. ok is false, and the refusal
// answered, when the request is no such upgrade or came over HTTP/2.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request, name, extra string) (conn net.Conn, brw *bufio.ReadWriter, release func(), ok bool) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), name) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", name)
		http.Error(w, "this path is an upgrade to "+name, http.StatusUpgradeRequired)
		return nil, nil, nil, false
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 cannot hand its connection over.
		http.Error(w, "this path needs a connection of its own (HTTP/1.1)", http.StatusHTTPVersionNotSupported)
		return nil, nil, nil, false
	}
	s.wg.Add(1)
	done := make(chan struct{})
	go func() {
		select {
		case <-s.quit:
			_ = conn.Close()
		case <-done:
		}
	}()
	release = func() {
		close(done)
		_ = conn.Close()
		s.wg.Done()
	}
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + name + "\r\n" + extra + "\r\n"); err != nil {
		release()
		return nil, nil, nil, false
	}
	if err := brw.Flush(); err != nil {
		release()
		return nil, nil, nil, false
	}
	return conn, brw, release, true
}

// writeBytesAnswer encodes the byte path's answer: the file's info, or the
// error as Write would have answered it.
func (s *Server) writeBytesAnswer(info *agentpb.FileInfo, err error) []byte {
	if err == nil {
		b, merr := proto.Marshal(&agentpb.WriteResponse{Info: info})
		if merr == nil {
			return append([]byte{agentpb.WriteBytesOK}, b...)
		}
		err = merr
	}
	return s.frameError(agentpb.WriteBytesFailed, agentpb.WriteBytesPath, err)
}

// frameError encodes err as a framed path's refusal: kind, then the
// FrameError the call's Connect procedure would have answered.
func (s *Server) frameError(kind byte, procedure string, err error) []byte {
	var ce *connect.Error
	errors.As(toConnect(s.log, procedure, err), &ce)
	out := agentpb.FrameError{Code: uint32(ce.Code()), Message: ce.Message()}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if ei, ok := v.(*agentpb.ErrorInfo); ok {
				out.Reason, out.Subject = ei.Reason, ei.Subject
			}
		}
	}
	b, _ := json.Marshal(out) // strings and a number always encode
	return append([]byte{kind}, b...)
}

// writeBytes reads the byte path's frames from src into a new file and
// commits it at the empty frame.
func writeBytes(src *byteSource) (*agentpb.FileInfo, error) {
	b, err := agentpb.ReadFrame(src, maxWriteHeaderBytes)
	if err != nil {
		if errors.Is(err, agentpb.ErrFrameTooLarge) {
			return nil, errInvalid("invalid_header", "%v", err)
		}
		return nil, err
	}
	hdr := new(agentpb.WriteHeader)
	if err := proto.Unmarshal(b, hdr); err != nil {
		return nil, errInvalid("invalid_header", "the first frame is not a write header: %v", err)
	}
	w, err := newFileWrite(hdr)
	if err != nil {
		return nil, err
	}
	defer w.discard()
	for {
		n, err := agentpb.ReadFrameLen(src)
		if errors.Is(err, agentpb.ErrFrameTooLarge) {
			return nil, errInvalid("frame_too_large", "%v", err)
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return w.commit()
		}
		if err := src.copyN(w.tmp, int64(n)); err != nil {
			if abandoned(err) {
				return nil, err
			}
			return nil, fsError("write", w.path, err)
		}
	}
}

// abandoned reports whether err is the client leaving mid-write: its
// connection ended or broke before the end frame. There is nobody to
// answer.
func abandoned(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// byteSource reads the byte path's connection: first whatever the HTTP
// server read ahead of the upgrade, then the connection itself, which
// copyN hands to the file whole so that the copy can be a splice.
type byteSource struct {
	buf  *bufio.Reader
	conn net.Conn
}

func (s *byteSource) Read(p []byte) (int, error) {
	if s.buf.Buffered() > 0 {
		return s.buf.Read(p)
	}
	return s.conn.Read(p)
}

// copyN moves the next n bytes into f. A source that ends first is
// io.ErrUnexpectedEOF.
func (s *byteSource) copyN(f *os.File, n int64) error {
	if k := min(int64(s.buf.Buffered()), n); k > 0 {
		if _, err := io.CopyN(f, s.buf, k); err != nil {
			return err
		}
		n -= k
	}
	// os.File.ReadFrom splices from a socket when it can.
	got, err := io.CopyN(f, s.conn, n)
	if got < n && (err == nil || errors.Is(err, io.EOF)) {
		return io.ErrUnexpectedEOF
	}
	return err
}
