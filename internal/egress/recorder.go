package egress

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
)

// recorder writes the proxy's decisions to the store in batches, off the
// requests' path, and prunes old ones. It says how far the log is written
// (waitRecorded), for a turn that reads what the proxy decided during it.
type recorder struct {
	st        decisionLog
	retention time.Duration
	logger    *slog.Logger
	in        chan store.EgressDecision
	// flush asks the writer to write what is buffered now.
	flush chan struct{}
	done  chan struct{}

	mu     sync.RWMutex
	closed bool
	// observe, when set, is told of each decision as it is recorded
	// (Gate.Observe).
	observe atomic.Pointer[func(store.EgressDecision)]

	// through: every decision recorded before it is written (or was
	// dropped); written is closed and replaced when it moves.
	progress sync.Mutex
	through  time.Time
	written  chan struct{}
}

// decisionLog is the store's log of decisions, as the recorder writes it.
type decisionLog interface {
	RecordEgress(ctx context.Context, ds []store.EgressDecision) error
	PruneEgress(ctx context.Context, before time.Time) (int64, error)
}

// recorderBuffer is how many decisions may wait to be written; beyond it
// they are dropped and counted in the log.
const recorderBuffer = 8192

func newRecorder(st decisionLog, retention time.Duration, logger *slog.Logger) *recorder {
	r := &recorder{
		st: st, retention: retention, logger: logger, in: make(chan store.EgressDecision, recorderBuffer),
		flush: make(chan struct{}, 1), done: make(chan struct{}), written: make(chan struct{}),
	}
	go r.run()
	return r
}

// record queues d to be written; a full queue drops it, and says so in
// the log.
func (r *recorder) record(d Decision) {
	row := store.EgressDecision{
		ID: uuid.NewString(), OrgID: d.OrgID, WorkspaceID: d.WorkspaceID, RuntimeID: d.RuntimeID, SandboxID: d.SandboxID,
		At: d.At, Allowed: d.Allowed, Reason: d.Reason, Refusal: string(d.Refusal), Method: d.Method, Host: d.Host, Port: d.Port,
		Addr: d.Addr, BytesUp: d.BytesUp, BytesDown: d.BytesDown, Duration: d.Duration, Brokered: d.Brokered,
	}
	if fn := r.observe.Load(); fn != nil {
		(*fn)(row)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return
	}
	select {
	case r.in <- row:
	default:
		r.logger.Warn("egress decision dropped: the recorder is behind", "runtime", d.RuntimeID, "host", d.Host)
	}
}

// waitRecorded returns once every decision recorded before t is in the
// store (or was dropped), or when ctx ends or the recorder stops first.
func (r *recorder) waitRecorded(ctx context.Context, t time.Time) error {
	for {
		r.progress.Lock()
		through, written := r.through, r.written
		r.progress.Unlock()
		if !through.Before(t) {
			return nil
		}
		select {
		case r.flush <- struct{}{}:
		default:
		}
		select {
		case <-written:
		case <-r.done:
			return errors.New("the egress recorder has stopped")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *recorder) run() {
	defer close(r.done)
	flush := time.NewTicker(250 * time.Millisecond)
	defer flush.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	var batch []store.EgressDecision
	// write takes everything buffered (all that was recorded before it
	// began) and writes it with the batch.
	write := func() {
		mark := time.Now()
		for drained := false; !drained; {
			select {
			case d, ok := <-r.in:
				if !ok {
					drained = true
					break
				}
				batch = append(batch, d)
			default:
				drained = true
			}
		}
		if len(batch) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := r.st.RecordEgress(ctx, batch); err != nil {
				r.logger.Error("recording egress decisions", "n", len(batch), "err", err)
			}
			cancel()
			batch = batch[:0]
		}
		r.progress.Lock()
		r.through = mark
		close(r.written)
		r.written = make(chan struct{})
		r.progress.Unlock()
	}
	for {
		select {
		case d, ok := <-r.in:
			if !ok {
				write()
				return
			}
			batch = append(batch, d)
			if len(batch) >= 256 {
				write()
			}
		case <-flush.C:
			write()
		case <-r.flush:
			write()
		case <-prune.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if _, err := r.st.PruneEgress(ctx, time.Now().Add(-r.retention)); err != nil {
				r.logger.Warn("pruning egress decisions", "err", err)
			}
			cancel()
		}
	}
}

// close writes what is buffered and stops.
func (r *recorder) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.in)
	}
	r.mu.Unlock()
	<-r.done
}
