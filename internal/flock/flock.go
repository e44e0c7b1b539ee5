// Package flock takes the host-wide locks several paddock processes on one
// host (replicas) share: an exclusive flock on a file or directory, which
// the kernel drops when its holder dies, so a killed replica never leaves
// one held.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock on path (a directory, or a file created
// if missing), waiting for it, and returns how to release it.
func Lock(path string) (unlock func(), err error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil
}

// Poll is how often LockContext asks for a lock another process holds.
const Poll = time.Second

// LockContext is Lock that gives up when ctx ends: it asks again every
// Poll while another process holds the lock.
func LockContext(ctx context.Context, path string) (unlock func(), err error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(Poll)
	defer t.Stop()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// open opens path to lock it: a directory as it is, anything else as a
// file, created if missing.
func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if errors.Is(err, unix.EISDIR) {
		f, err = os.Open(path)
	}
	return f, err
}
