package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Replicas on one host share the data directory. What a start makes
// there, and the image builds on the host's engine, happen on one of them
// at a time, under flocks the kernel drops when their holder dies.

// lockStart takes the start lock of the data directory (an exclusive
// flock on it, which the kernel drops if the process dies): replicas on
// one host sharing the data directory initialise and start one after
// another, so what a first start makes there and in the store (the
// installation id, the keys, the egress CA, the run directory's mount,
// the first admin key) is made once and read by the next.
func lockStart(dataDir string) (unlock func(), err error) {
	f, err := os.Open(dataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock the data dir %s: %w", dataDir, err)
	}
	return func() { _ = f.Close() }, nil
}

// lockPoll is how often waitLock asks for a lock another process holds.
const lockPoll = time.Second

// waitLock takes an exclusive flock on the file path (created if
// missing), asking again every lockPoll while another process holds it,
// until ctx ends.
func waitLock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(lockPoll)
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
