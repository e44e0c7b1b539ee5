package shim

import (
	"context"
	"io"
	"net/http"

	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// serveExecFrames serves Exec's framed path (agentpb.ExecFramesPath): the
// calls of one connection in turn, each started, fed and followed as
// ProcessService.Exec does, its messages in frames on the connection
// rather than in Connect envelopes on an HTTP/2 stream.
func (s *Server) serveExecFrames(w http.ResponseWriter, r *http.Request) {
	extra := ""
	if s.env.given() {
		extra = agentpb.ExecFramesEnvHeader + ": set\r\n"
	}
	conn, brw, release, ok := s.upgrade(w, r, agentpb.ExecFramesUpgrade, extra)
	if !ok {
		return
	}
	defer release()
	// ctx ends with the connection: its calls end as cancelled ones do.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := make(chan *framedCall)
	s.wg.Go(func() {
		defer cancel()
		readCalls(ctx, brw.Reader, calls)
	})
	for {
		var c *framedCall
		select {
		case c = <-calls:
		case <-ctx.Done():
			return
		}
		err := s.execFramed(ctx, c, conn)
		close(c.done)
		end := []byte{agentpb.ExecFrameEnd}
		if err != nil {
			if ctx.Err() != nil {
				return // the client left: nobody to answer
			}
			end = s.frameError(agentpb.ExecFrameFailed, agentpb.ExecFramesPath, err)
		}
		if agentpb.WriteFrame(conn, end) != nil {
			return
		}
	}
}

// framedCall is one call on a framed exec connection: its first frame,
// the frames after it until the client's empty frame (in, closed at it),
// and done, closed once the agent is through with the call.
type framedCall struct {
	first []byte
	in    chan []byte
	done  chan struct{}
}

// readCalls reads a framed exec connection's frames into calls until the
// connection ends or ctx does.
func readCalls(ctx context.Context, r io.Reader, calls chan<- *framedCall) {
	for {
		first, err := agentpb.ReadFrame(r, agentpb.ExecFrameMax)
		if err != nil {
			return
		}
		c := &framedCall{first: first, in: make(chan []byte), done: make(chan struct{})}
		select {
		case calls <- c:
		case <-ctx.Done():
			return
		}
		if len(first) == 0 {
			close(c.in) // the call's end came first: it is refused
			continue
		}
		for {
			b, err := agentpb.ReadFrame(r, agentpb.ExecFrameMax)
			if err != nil {
				return
			}
			if len(b) == 0 {
				close(c.in)
				break
			}
			select {
			case c.in <- b:
			case <-c.done: // the call is over: what the client still sends is dropped
			case <-ctx.Done():
				return
			}
		}
	}
}

// execFramed serves one call of a framed exec connection.
func (s *Server) execFramed(ctx context.Context, c *framedCall, w io.Writer) error {
	var first *agentpb.ExecRequest // nil (no start) for the empty frame
	if len(c.first) > 0 {
		first = new(agentpb.ExecRequest)
		if err := proto.Unmarshal(c.first, first); err != nil {
			return errInvalid("invalid_message", "the first frame is not an exec request: %v", err)
		}
	}
	p, err := s.startExec(first)
	if err != nil {
		return err
	}
	defer s.procs.release(p)
	send := execEvents(func(m *agentpb.ExecResponse) error {
		b, err := proto.MarshalOptions{}.MarshalAppend([]byte{agentpb.ExecFrameEvent}, m)
		if err != nil {
			return err
		}
		return agentpb.WriteFrame(w, b)
	})
	if err := send(startedEvent(p)); err != nil {
		return err
	}
	recv := func() (control, error) {
		select {
		case b, ok := <-c.in:
			if !ok {
				return control{}, io.EOF
			}
			msg := new(agentpb.ExecRequest)
			if err := proto.Unmarshal(b, msg); err != nil {
				return control{}, errInvalid("invalid_message", "a frame is not an exec request: %v", err)
			}
			return controlOf(msg), nil
		case <-ctx.Done():
			return control{}, ctx.Err()
		}
	}
	return s.serveCall(ctx, p, recv, send)
}
