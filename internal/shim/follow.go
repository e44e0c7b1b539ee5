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
	var (
		bufs  [2][]byte
		outs  [2]*agentpb.Output
		losts [2]*agentpb.OutputLost
	)
	for {
		var exited *agentpb.Exited
		progressed := false
		p.mu.Lock()
		for i, r := range p.out {
			outs[i], losts[i] = nil, nil
			if r == nil {
				continue
			}
			if bufs[i] == nil && r.end > offs[i] {
				bufs[i] = make([]byte, chunkSize)
			}
			if bufs[i] == nil {
				if offs[i] < r.start {
					losts[i] = &agentpb.OutputLost{Stream: streamNames[i], Offset: offs[i], Bytes: r.start - offs[i]}
					offs[i] = r.start
				}
				continue
			}
			n, lost := r.readAt(offs[i], bufs[i])
			if lost > 0 {
				losts[i] = &agentpb.OutputLost{Stream: streamNames[i], Offset: offs[i], Bytes: lost}
				offs[i] += lost
			}
			if n > 0 {
				outs[i] = &agentpb.Output{Stream: streamNames[i], Offset: offs[i], Data: bufs[i][:n]}
				offs[i] += int64(n)
			}
			if losts[i] != nil || outs[i] != nil {
				progressed = true
			}
		}
		if owner && progressed {
			p.pins = offs
			p.broadcastLocked()
		}
		done := p.done
		if done && !progressed && p.exited {
			exited = p.exitedLocked()
		}
		changed := p.changed
		p.mu.Unlock()

		for i := range outs {
			if losts[i] != nil {
				if err := sink.lost(losts[i]); err != nil {
					return err
				}
			}
			if outs[i] != nil {
				if err := sink.output(outs[i]); err != nil {
					return err
				}
			}
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

var errShuttingDown = &rpcError{kind: kindUnavailable, reason: "shutting_down", msg: "the agent is shutting down"}
