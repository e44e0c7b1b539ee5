package server

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/flock"
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
	unlock, err = flock.Lock(dataDir)
	if err != nil {
		return nil, fmt.Errorf("lock the data dir %s: %w", dataDir, err)
	}
	return unlock, nil
}
