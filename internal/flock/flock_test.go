package flock_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/paddockhq/paddock/internal/flock"
)

// TestLockExcludes: a file's and a directory's lock is held by one taker
// at a time; LockContext gives up when its context ends and takes the lock
// once it is free.
func TestLockExcludes(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "x.lock"), t.TempDir()} {
		unlock, err := flock.Lock(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := flock.LockContext(ctx, path); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: a held lock taken again: %v, want the context's end", path, err)
		}
		unlock()
		unlock2, err := flock.LockContext(t.Context(), path)
		if err != nil {
			t.Fatalf("%s: a released lock: %v", path, err)
		}
		unlock2()
	}
}

// TestLockContextWaits: LockContext asks again until the holder lets go.
func TestLockContextWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := flock.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		got := make(chan error, 1)
		go func() {
			u, err := flock.LockContext(t.Context(), path)
			if err == nil {
				u()
			}
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("took a held lock: %v", err)
		default:
		}
		unlock()
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	})
}
