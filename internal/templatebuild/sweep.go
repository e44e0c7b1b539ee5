package templatebuild

import (
	"context"
	"time"
)

// codeInterrupted is a build no server finishes: the server running it
// stopped before it ended.
const codeInterrupted = "build_interrupted"

// sweepGrace is how long past its time limit a build is still thought
// to be running somewhere: a server stops its builds at their limit, and
// records the end within this.
const sweepGrace = time.Minute

// sweepEvery is how often a server looks for builds no server finishes.
const sweepEvery = time.Minute

// Sweep fails, with build_interrupted, the builds still building past
// the time limit and its grace: the server that ran them stopped before
// recording their end (a build is stopped at its limit wherever it
// runs, so no replica still runs one). It answers how many.
func (s *Service) Sweep(ctx context.Context) (int64, error) {
	now := s.cfg.Now()
	return s.cfg.Store.FailStaleTemplateBuilds(ctx, now.Add(-s.cfg.Timeout-sweepGrace), now, codeInterrupted)
}

// StartSweeping sweeps at once and then every minute, until Close.
func (s *Service) StartSweeping() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(sweepEvery)
		defer t.Stop()
		for {
			if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("template builds: sweep failed", "err", err)
			} else if n > 0 {
				s.cfg.Logger.Info("template builds: failed builds no server finishes", "builds", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Close stops the sweeps StartSweeping began.
func (s *Service) Close() {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
}
