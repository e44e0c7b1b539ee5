package agentconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// bytesFrameSize is the most data one frame of the byte path carries.
const bytesFrameSize = 1 << 20

// writeBytes writes a file by the agent's byte path
// (agentpb.WriteBytesPath): hdr, then first, then what r yields, on a
// connection of its own. served is false, and nothing was written, when
// the agent has no such path; the caller then uses FileService.Write.
func (c *Client) writeBytes(ctx context.Context, hdr *agentpb.WriteHeader, first []byte, r io.Reader) (info FileInfo, served bool, err error) {
	conn, err := c.dialBytes(ctx)
	if err != nil {
		return FileInfo{}, true, mapError(err)
	}
	defer conn.Close()
	// A cancelled call closes its connection: the agent sees it end
	// before the end frame and discards what it wrote.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	br := bufio.NewReader(conn)
	_, upgraded, err := upgrade(conn, br, agentpb.WriteBytesPath, agentpb.WriteBytesUpgrade)
	if err != nil {
		return FileInfo{}, true, bytesLinkError(ctx, err)
	}
	if !upgraded {
		return FileInfo{}, false, nil
	}
	h, err := proto.Marshal(hdr)
	if err != nil {
		return FileInfo{}, true, err
	}
	// The agent answers at the end, or as soon as it refuses the write
	// (a read-only file system at the start, a full disk midway), and
	// then closes the connection without reading the rest. The answer is
	// read as it comes, so a refusal ends the sending and is not lost to
	// a send that failed on the closed connection.
	answered := make(chan bytesAnswer, 1)
	go func() {
		b, err := agentpb.ReadFrame(br, agentpb.WriteBytesFrameMax)
		answered <- bytesAnswer{b, err}
	}()
	serr := agentpb.WriteFrame(conn, h)
	if serr == nil {
		serr = agentpb.WriteFrame(conn, first)
	}
	if serr == nil {
		var rerr error
		if serr, rerr = sendFrames(conn, r, answered); rerr != nil {
			// Leave without the end frame: the agent discards the
			// partial file.
			return FileInfo{}, true, rerr
		}
	}
	a := <-answered
	if a.err != nil {
		if serr != nil {
			a.err = serr
		}
		return FileInfo{}, true, bytesLinkError(ctx, a.err)
	}
	info, err = decodeBytesAnswer(a.frame)
	return info, true, err
}

// bytesAnswer is the agent's answer frame, or why none came.
type bytesAnswer struct {
	frame []byte
	err   error
}

// upgrade asks the agent to switch conn to protocol name at path. It
// reports whether the agent switched, with its answer's header; an agent
// without the path answers anything else.
func upgrade(conn net.Conn, br *bufio.Reader, path, name string) (http.Header, bool, error) {
	req := "POST " + path + " HTTP/1.1\r\nHost: paddock-agent\r\nConnection: Upgrade\r\nUpgrade: " +
		name + "\r\nContent-Length: 0\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, false, err
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, false, err
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		_ = res.Body.Close()
		return nil, false, nil
	}
	return res.Header, true, nil
}

// sendFrames sends what r yields in frames, then the end frame, unless
// the agent answered first (a refusal: answered is then left for the
// caller). sendErr is the link's failure, srcErr r's: the write is then
// abandoned.
func sendFrames(conn net.Conn, r io.Reader, answered chan bytesAnswer) (sendErr, srcErr error) {
	if r == nil {
		return agentpb.WriteFrame(conn, nil), nil
	}
	chunks, stop := readAhead(r)
	defer stop()
	for {
		var c readChunk
		select {
		case c = <-chunks:
		case a := <-answered:
			answered <- a // a refusal, for the caller
			return nil, nil
		}
		if len(c.data) > 0 {
			if err := agentpb.WriteFrame(conn, c.data); err != nil {
				return err, nil
			}
		}
		if errors.Is(c.err, io.EOF) {
			return agentpb.WriteFrame(conn, nil), nil
		}
		if c.err != nil {
			return nil, c.err
		}
		c.done()
	}
}

// readChunk is a frame's worth of r, or r's end (io.EOF) or failure.
// done hands its buffer back for the next read.
type readChunk struct {
	data []byte
	err  error
	done func()
}

// readAhead reads r into frames on a goroutine of its own, one frame
// ahead of the caller, so that reading the source (in the server, the
// client's request) and sending to the agent overlap: sent in turn, an
// upload ran at 630–690 MB/s, overlapped at 810–860. The last chunk is
// the one with an error; after it nothing comes. stop ends the reads and
// waits for the one under way, so r is not read after the caller returns.
func readAhead(r io.Reader) (<-chan readChunk, func()) {
	const depth = 2
	free := make(chan []byte, depth)
	for range depth {
		free <- make([]byte, bytesFrameSize)
	}
	chunks := make(chan readChunk, depth)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-quit:
				return
			}
			n, err := fill(r, buf)
			c := readChunk{data: buf[:n], err: err, done: func() { free <- buf }}
			select {
			case chunks <- c:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	})
	return chunks, func() {
		close(quit)
		wg.Wait()
	}
}

// decodeBytesAnswer reads the agent's answer to a byte-path write: the
// file's info, or the error Write would have answered, mapped as any call's.
func decodeBytesAnswer(b []byte) (FileInfo, error) {
	if len(b) == 0 {
		return FileInfo{}, fmt.Errorf("%w: an empty answer to a byte-path write", ErrAgentInternal)
	}
	switch b[0] {
	case agentpb.WriteBytesOK:
		var res agentpb.WriteResponse
		if err := proto.Unmarshal(b[1:], &res); err != nil {
			return FileInfo{}, fmt.Errorf("%w: a byte-path write's answer: %w", ErrAgentInternal, err)
		}
		return fileInfo(res.Info), nil
	case agentpb.WriteBytesFailed:
		return FileInfo{}, mapError(frameError(b[1:]))
	}
	return FileInfo{}, fmt.Errorf("%w: a byte-path write's answer of kind %d", ErrAgentInternal, b[0])
}

// frameError decodes a framed path's refusal (an agentpb.FrameError) into
// the error its Connect procedure would have returned.
func frameError(b []byte) error {
	var e agentpb.FrameError
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("%w: a framed call's error: %w", ErrAgentInternal, err)
	}
	ce := connect.NewError(connect.Code(e.Code), errors.New(e.Message))
	if e.Reason != "" {
		if d, err := connect.NewErrorDetail(&agentpb.ErrorInfo{Reason: e.Reason, Subject: e.Subject}); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}

// bytesLinkError is a byte-path connection's failure: the caller's own
// cancellation, or an unreachable agent.
func bytesLinkError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("agent call: %w", context.Cause(ctx))
	}
	return mapError(err)
}
