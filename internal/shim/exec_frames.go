package shim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// errFramesViolated ends a framed exec connection whose client broke the
// path's rules; the call in progress ends as a cancelled one.
var errFramesViolated = errors.New("the client broke the framed exec path's rules")

// serveExecFrames serves Exec's framed path (agentpb.ExecFramesPath): the
// calls of one connection in turn, each started and followed as
// ProcessService.Exec does, its messages in frames on the connection
// rather than in Connect envelopes on an HTTP/2 stream. The connection is
// read all the time, so that its end is seen at once and ends the call in
// progress, killing a foreground process, as a closed stream does.
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
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	calls := make(chan *framedCall)
	s.wg.Go(func() { cancel(readCalls(ctx, brw.Reader, calls)) })
	for {
		var c *framedCall
		select {
		case c = <-calls:
		case <-ctx.Done():
			return
		}
		err := s.execFramed(ctx, cancel, c, conn)
		close(c.done)
		end := []byte{agentpb.ExecFrameEnd}
		if err != nil {
			if ctx.Err() != nil || abandoned(err) {
				if errors.Is(context.Cause(ctx), errFramesViolated) {
					s.log.Debug("closed a framed exec connection", "err", context.Cause(ctx))
				}
				// The client left (a send failed before the read saw the
				// end), or is sent away: nobody to answer.
				return
			}
			end = s.frameError(agentpb.ExecFrameFailed, agentpb.ExecFramesPath, err)
		}
		if agentpb.WriteFrame(conn, end) != nil {
			return
		}
	}
}

// framedCall is one call on a framed exec connection: its first frame,
// the frames after it, queued until the call's recv takes them, and done,
// closed once the agent is through with the call.
type framedCall struct {
	first []byte
	done  chan struct{}
	more  chan struct{} // a frame queued, or the end came
	room  chan struct{} // a frame taken from a full queue

	mu     sync.Mutex
	queue  [][]byte
	closed bool // the client's empty frame came
}

// readCalls reads a framed exec connection's frames into calls until the
// connection ends (it returns why) or ctx does.
func readCalls(ctx context.Context, r io.Reader, calls chan<- *framedCall) error {
	var prev *framedCall
	for {
		first, err := agentpb.ReadFrame(r, agentpb.ExecFrameMax)
		if err != nil {
			return err
		}
		if prev != nil {
			select {
			case <-prev.done:
			default:
				// A client starts a call only once the one before it
				// ended; a start sooner would wait, the connection unread.
				return errFramesViolated
			}
		}
		c := newFramedCall(first)
		select {
		case calls <- c:
		case <-ctx.Done():
			return nil
		}
		prev = c
		if len(first) == 0 { // the call's end came first
			c.add(ctx, nil)
			continue
		}
		for {
			b, err := agentpb.ReadFrame(r, agentpb.ExecFrameMax)
			if err != nil {
				return err
			}
			closed, err := c.add(ctx, b)
			if err != nil {
				return err
			}
			if closed {
				break
			}
		}
	}
}

func newFramedCall(first []byte) *framedCall {
	return &framedCall{first: first, done: make(chan struct{}), more: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// add queues a frame of the call's, or with the empty frame marks the
// request side's end. It reports whether the call's frames are over. A
// full queue waits for the call's recv, which takes a frame in the time
// of a signal's system call; the connection's end is seen after that.
func (c *framedCall) add(ctx context.Context, b []byte) (closed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(b) > 0 && len(c.queue) >= agentpb.ExecFramesQueued {
		c.mu.Unlock()
		select {
		case <-c.room:
		case <-c.done:
		case <-ctx.Done():
			c.mu.Lock()
			return false, ctx.Err()
		}
		c.mu.Lock()
		select {
		case <-c.done:
			return false, nil // the call is over: what the client still sends is dropped
		default:
		}
	}
	select {
	case <-c.done:
		if len(b) > 0 {
			return false, nil
		}
	default:
	}
	if len(b) == 0 {
		c.closed = true
	} else {
		c.queue = append(c.queue, b)
	}
	select {
	case c.more <- struct{}{}:
	default:
	}
	return c.closed, nil
}

// next takes the call's next frame: io.EOF once the request side ended.
func (c *framedCall) next(ctx context.Context) ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			b := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			select {
			case c.room <- struct{}{}:
			default:
			}
			return b, nil
		}
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return nil, io.EOF
		}
		select {
		case <-c.more:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// execFramed serves one call of a framed exec connection; end ends the
// connection.
func (s *Server) execFramed(ctx context.Context, end context.CancelCauseFunc, c *framedCall, w io.Writer) error {
	var first *agentpb.ExecRequest // nil (no start) for the empty frame
	if len(c.first) > 0 {
		first = new(agentpb.ExecRequest)
		if err := proto.Unmarshal(c.first, first); err != nil {
			return errInvalid("invalid_message", "the first frame is not an exec request: %v", err)
		}
	}
	if st := first.GetStart(); st.GetStdin() || st.GetPty() != nil {
		return errInvalid("invalid_stdin", "a process with stdin or a terminal goes by ProcessService.Exec, not the framed path")
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
		b, err := c.next(ctx)
		if err != nil {
			return control{}, err
		}
		msg := new(agentpb.ExecRequest)
		err = proto.Unmarshal(b, msg)
		if _, stdin := msg.GetMsg().(*agentpb.ExecRequest_Stdin); err != nil || stdin {
			end(errFramesViolated) // a frame that is no message, or stdin the process has not
			return control{}, errFramesViolated
		}
		return controlOf(msg), nil
	}
	return s.serveCall(ctx, p, recv, send)
}
