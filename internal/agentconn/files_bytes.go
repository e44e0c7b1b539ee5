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
	upgraded, err := upgradeBytes(conn, br)
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
	serr := agentpb.WriteFrame(conn, h)
	if serr == nil {
		serr = agentpb.WriteFrame(conn, first)
	}
	if serr == nil {
		var rerr error
		if serr, rerr = sendFrames(conn, r); rerr != nil {
			// Leave without the end frame: the agent discards the
			// partial file.
			return FileInfo{}, true, rerr
		}
	}
	// An agent that refuses the write midway (a full disk) answers and
	// stops reading, so a failed send is followed by a look for its
	// answer, which says more than the send's error.
	answer, err := agentpb.ReadFrame(br, agentpb.WriteBytesFrameMax)
	if err != nil {
		if serr != nil {
			err = serr
		}
		return FileInfo{}, true, bytesLinkError(ctx, err)
	}
	info, err = decodeBytesAnswer(answer)
	return info, true, err
}

// upgradeBytes asks the agent for the byte path on conn. It reports
// whether the agent switched to it; an agent without it answers anything
// else.
func upgradeBytes(conn net.Conn, br *bufio.Reader) (bool, error) {
	req := "POST " + agentpb.WriteBytesPath + " HTTP/1.1\r\nHost: paddock-agent\r\nConnection: Upgrade\r\nUpgrade: " +
		agentpb.WriteBytesUpgrade + "\r\nContent-Length: 0\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return false, err
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return false, err
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		_ = res.Body.Close()
		return false, nil
	}
	return true, nil
}

// sendFrames sends what r yields in frames, then the end frame. sendErr
// is the link's failure, srcErr r's: the write is then abandoned.
func sendFrames(conn net.Conn, r io.Reader) (sendErr, srcErr error) {
	if r == nil {
		return agentpb.WriteFrame(conn, nil), nil
	}
	buf := make([]byte, bytesFrameSize)
	for {
		n, err := fill(r, buf)
		if n > 0 {
			if serr := agentpb.WriteFrame(conn, buf[:n]); serr != nil {
				return serr, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return agentpb.WriteFrame(conn, nil), nil
		}
		if err != nil {
			return nil, err
		}
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
		var e agentpb.WriteBytesError
		if err := json.Unmarshal(b[1:], &e); err != nil {
			return FileInfo{}, fmt.Errorf("%w: a byte-path write's error: %w", ErrAgentInternal, err)
		}
		ce := connect.NewError(connect.Code(e.Code), errors.New(e.Message))
		if e.Reason != "" {
			if d, err := connect.NewErrorDetail(&agentpb.ErrorInfo{Reason: e.Reason, Subject: e.Subject}); err == nil {
				ce.AddDetail(d)
			}
		}
		return FileInfo{}, mapError(ce)
	}
	return FileInfo{}, fmt.Errorf("%w: a byte-path write's answer of kind %d", ErrAgentInternal, b[0])
}

// bytesLinkError is a byte-path connection's failure: the caller's own
// cancellation, or an unreachable agent.
func bytesLinkError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("agent call: %w", context.Cause(ctx))
	}
	return mapError(err)
}
