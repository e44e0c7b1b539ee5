package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// maxWrites bounds how many times one change is written: once, and again
// after each write of another server that made it stale but left alone
// what it was decided on.
const maxWrites = 3

// writeRuntime writes one change to the runtime row rt (as read) with
// write, a store verb called on the row it is given. The runtime's lock
// serializes writers in this process; another server on the same
// database may still write the row between this one's read and its write
// (store.ErrStale). Then the row is read again and, if still(fresh)
// holds (what the change was decided on is as it was), the change is
// written again on the fresh row; a nil still always allows it (write
// computes the change from the row it is given). So verbs of different
// columns, a configuration change beside a start, neither undo nor fail
// each other, while a change decided on columns another server changed
// is a lost race: 409 runtime_busy. On failure rt is returned as read.
func writeRuntime(ctx context.Context, q runtimeWriter, rt store.Runtime, still func(fresh store.Runtime) bool,
	write func(rt store.Runtime) (store.Runtime, error)) (store.Runtime, error) {
	cur := rt
	for n := 1; ; n++ {
		got, err := write(cur)
		if err == nil {
			return got, nil
		}
		if !errors.Is(err, store.ErrStale) || n == maxWrites {
			return rt, lostRace(rt, err)
		}
		fresh, rerr := q.GetRuntime(ctx, rt.ID)
		if rerr != nil {
			return rt, rerr
		}
		if still != nil && !still(fresh) {
			return rt, lostRace(rt, err)
		}
		cur = fresh
	}
}

// setState moves the runtime row rt, as read, to the lifecycle state to
// at at, and returns the stored row. Another server's write that left
// rt's state as it was (a configuration change, a port marked public)
// does not stop it; one that moved the state does (409 runtime_busy).
func setState(ctx context.Context, q runtimeWriter, rt store.Runtime, to store.RuntimeState, at time.Time) (store.Runtime, error) {
	from := rt.State()
	return writeRuntime(ctx, q, rt, func(fresh store.Runtime) bool { return fresh.State() == from },
		func(rt store.Runtime) (store.Runtime, error) {
			return q.SetRuntimeState(ctx, rt.ID, rt.Version, to, at)
		})
}

// setSnapshot writes ref as the runtime row rt's snapshot at at, unless
// another server changed the snapshot since rt was read.
func setSnapshot(ctx context.Context, q runtimeWriter, rt store.Runtime, ref string, at time.Time) (store.Runtime, error) {
	was := rt.Snapshot
	return writeRuntime(ctx, q, rt, func(fresh store.Runtime) bool { return fresh.Snapshot == was },
		func(rt store.Runtime) (store.Runtime, error) {
			return q.SetRuntimeSnapshot(ctx, rt.ID, rt.Version, ref, at)
		})
}

// setVolume writes volume as the runtime row rt's workspace volume at at,
// unless another server changed it since rt was read.
func setVolume(ctx context.Context, q runtimeWriter, rt store.Runtime, volume string, at time.Time) (store.Runtime, error) {
	was := rt.WorkspaceVolume
	return writeRuntime(ctx, q, rt, func(fresh store.Runtime) bool { return fresh.WorkspaceVolume == was },
		func(rt store.Runtime) (store.Runtime, error) {
			return q.SetRuntimeWorkspaceVolume(ctx, rt.ID, rt.Version, volume, at)
		})
}
