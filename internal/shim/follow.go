package shim

import (
	"context"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// chunkSize is the most data one message carries.
const chunkSize = 256 << 10

// eventSink receives a process's events, in order.
type eventSink interface {
	output(*agentpb.Output) error
	lost(*agentpb.OutputLost) error
	exited(*agentpb.Exited) error
}

var streamNames = [2]agentpb.OutputStream{agentpb.OutputStream_OUTPUT_STREAM_STDOUT, agentpb.OutputStream_OUTPUT_STREAM_STDERR}

// follow sends the process's output from offsets offs to sink, then its exit.
// With keepFollowing false it sends only what is buffered now (and the exit
// if the process is done). owner marks the follower of a foreground process:
// its progress releases the process's backpressure. follow returns when the
// exit has been sent, ctx is done, quit is closed or sink fails.
func (p *process) follow(ctx context.Context, quit <-chan struct{}, offs [2]int64, keepFollowing, owner bool, sink eventSink) error {
	f := followed{offs: offs}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var exited *agentpb.Exited
		p.mu.Lock()
		progressed := p.readLocked(&f)
		// A follower whose call has ended no longer holds the pins: a
		// terminal's next follower may have moved them (terminals.attach).
		if owner && progressed && ctx.Err() == nil {
			p.pins = f.offs
			p.broadcastLocked()
		}
		done := p.done
		if done && !progressed && p.exited {
			exited = p.exitedLocked()
		}
		changed := p.changed
		p.mu.Unlock()

		if err := f.send(sink); err != nil {
			return err
		}
		if progressed {
			continue
		}
		if done {
			if exited != nil {
				return sink.exited(exited)
			}
			return nil
		}
		if !keepFollowing {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-quit:
			return errShuttingDown
		}
	}
}

// followed is where follow is in each output stream, and what its last
// read found there to send.
type followed struct {
	offs  [2]int64
	bufs  [2][]byte // allocated at a stream's first output
	outs  [2]*agentpb.Output
	losts [2]*agentpb.OutputLost
}

// readLocked reads each stream's output from f's offsets on into f's outs,
// and the output lost before it (overwritten in the ring) into f's losts,
// moving the offsets past both. It reports whether either moved. p.mu is
// held.
func (p *process) readLocked(f *followed) (progressed bool) {
	for i, r := range p.out {
		f.outs[i], f.losts[i] = nil, nil
		if r == nil {
			continue
		}
		if f.bufs[i] == nil && r.end > f.offs[i] {
			f.bufs[i] = make([]byte, chunkSize)
		}
		if f.bufs[i] == nil {
			if f.offs[i] < r.start {
				f.losts[i] = &agentpb.OutputLost{Stream: streamNames[i], Offset: f.offs[i], Bytes: r.start - f.offs[i]}
				f.offs[i] = r.start
			}
			continue
		}
		n, lost := r.readAt(f.offs[i], f.bufs[i])
		if lost > 0 {
			f.losts[i] = &agentpb.OutputLost{Stream: streamNames[i], Offset: f.offs[i], Bytes: lost}
			f.offs[i] += lost
		}
		if n > 0 {
			f.outs[i] = &agentpb.Output{Stream: streamNames[i], Offset: f.offs[i], Data: f.bufs[i][:n]}
			f.offs[i] += int64(n)
		}
		if f.losts[i] != nil || f.outs[i] != nil {
			progressed = true
		}
	}
	return progressed
}

// send sends what the last read found to sink, stream by stream, each
// stream's loss before its output.
func (f *followed) send(sink eventSink) error {
	for i := range f.outs {
		if f.losts[i] != nil {
			if err := sink.lost(f.losts[i]); err != nil {
				return err
			}
		}
		if f.outs[i] != nil {
			if err := sink.output(f.outs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

var errShuttingDown = &rpcError{kind: kindUnavailable, reason: "shutting_down", msg: "the agent is shutting down"}
