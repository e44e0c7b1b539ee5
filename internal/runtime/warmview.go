package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
)

// WarmPoolView is one warm pool as an operator sees it: its template, the
// size it is kept at (an adaptive pool's target now), and the warm sandboxes it has now. A pool no longer
// configured whose sandboxes are still there (until the reconciler
// discards them) has Size 0 and Configured false.
type WarmPoolView struct {
	Template   string
	Configured bool
	Provider   string
	Image      string
	CPUMillis  int64
	MemoryMB   int64
	Network    string
	Size       int
	Running    bool
	Sandboxes  []store.WarmSandbox // oldest first
}

// WarmPoolViews lists the configured warm pools, in configuration order,
// then any other template that still has warm sandboxes.
func (s *Service) WarmPoolViews(ctx context.Context) ([]WarmPoolView, error) {
	all, err := s.store.ListWarmSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	pools, _ := s.resolvedPools()
	sizes := s.warm.warmSizes(s.now())
	out := make([]WarmPoolView, 0, len(pools))
	at := map[string]int{}
	for _, rp := range pools {
		at[rp.key] = len(out)
		out = append(out, WarmPoolView{
			Template: rp.key, Configured: true, Provider: rp.provider.Name(), Image: rp.config.Image,
			CPUMillis: rp.config.CPUMillis, MemoryMB: rp.config.MemoryMB, Network: rp.config.Network.Mode,
			Size: sizes[rp.key], Running: rp.running,
			Sandboxes: []store.WarmSandbox{},
		})
	}
	for _, w := range all {
		i, ok := at[w.Template]
		if !ok {
			i = len(out)
			at[w.Template] = i
			out = append(out, WarmPoolView{Template: w.Template, Provider: w.Provider, Image: w.Image,
				CPUMillis: w.CPUMillis, MemoryMB: w.MemoryMB, Sandboxes: []store.WarmSandbox{}})
		}
		out[i].Sandboxes = append(out[i].Sandboxes, w)
	}
	return out, nil
}
