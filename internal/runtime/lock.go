package runtime

import (
	"context"
	"sync"

	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/store"
)

// keyedMutex serializes actions per runtime id inside one server process.
// Across processes the store's lock (store.Locker) does, where the store
// is shared; the optimistic version check on every row stays the guard
// behind both.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{} // holds one token while locked
	refs int
}

func newKeyedMutex() *keyedMutex {
	return &keyedMutex{locks: map[string]*keyLock{}}
}

// lock takes the lock for key or returns ctx's error. The returned function
// releases it.
func (k *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	l, ok := k.locks[key]
	if !ok {
		l = &keyLock{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()

	select {
	case l.ch <- struct{}{}:
		return func() {
			<-l.ch
			k.release(key, l)
		}, nil
	case <-ctx.Done():
		k.release(key, l)
		return nil, ctx.Err()
	}
}

func (k *keyedMutex) release(key string, l *keyLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l.refs--
	if l.refs == 0 {
		delete(k.locks, key)
	}
}

// onRuntime runs fn on runtime id under its lock, on a context detached
// from the caller's (bounded by the provision timeout, so a caller that
// goes away cannot leave provider work half done), with the runtime
// freshly read after the lock was taken.
func onRuntime[T any](ctx context.Context, s *Service, id string, fn func(ctx context.Context, rt store.Runtime) (T, error)) (T, error) {
	var zero T
	ctx = logs.With(ctx, logs.KeyRuntime, id)
	if err := s.pending.check(ctx, id); err != nil {
		return zero, err
	}
	unlock, err := s.lockRuntime(ctx, id)
	if err != nil {
		return zero, err
	}
	defer unlock()
	ctx, cancel := s.detached(ctx)
	defer cancel()
	rt, err := s.store.GetRuntime(ctx, id)
	if err != nil {
		return zero, err
	}
	v, err := fn(ctx, rt)
	return v, busyIfStale(id, err)
}
