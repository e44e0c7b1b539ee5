package e2b

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Connect (v1 and v2) brings a sandbox back when it is paused and sets
// its timeout: 200 when it was running, 201 when it was brought back.
// The deprecated resume does the same to a paused sandbox only (409 for
// a running one, as E2B answers).

// ResumedSandbox's default timeout, in seconds.
const defaultResumeTimeout = 15

// connect is POST /sandboxes/{id}/connect and /v2/sandboxes/{id}/connect:
// its timeout defaults to v2's, 300 s.
func (g *Gateway) connect(c *call) error {
	var req timeoutRequest
	if err := decodeBody(c.r, &req); err != nil {
		return err
	}
	timeout, err := timeoutOf(req.Timeout, defaultTimeoutV2)
	if err != nil {
		return err
	}
	rt, rec, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	return g.bringUp(c, rt, rec, timeout)
}

func (g *Gateway) resume(c *call) error {
	var req timeoutRequest
	if err := decodeBody(c.r, &req); err != nil {
		return err
	}
	timeout, err := timeoutOf(req.Timeout, defaultResumeTimeout)
	if err != nil {
		return err
	}
	rt, rec, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	if stateOf(rt) == stateRunning {
		return errdefs.Conflict("sandbox_already_running", "sandbox %s is already running", rt.ID)
	}
	return g.bringUp(c, rt, rec, timeout)
}

// bringUp runs the sandbox, sets its timeout and answers it.
func (g *Gateway) bringUp(c *call, rt store.Runtime, rec store.E2BSandbox, timeout int64) error {
	rt, woke, err := g.run(c.ctx(), rt)
	if err != nil {
		return err
	}
	if woke {
		rt, err = g.applyTimeout(c.ctx(), rt, timeout)
	} else {
		rt, err = g.extendTimeout(c.ctx(), rt, timeout)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if woke {
		status = http.StatusCreated
	}
	writeJSON(c.w, status, g.sandboxOut(c, rt, rec))
	return nil
}

// run brings rt to running: a paused or archived runtime is resumed, one
// whose sandbox was released is started again; woke says whether it was
// not running. A runtime in error stays so (409, with why).
func (g *Gateway) run(ctx context.Context, rt store.Runtime) (_ store.Runtime, woke bool, err error) {
	switch rt.Status {
	case store.RuntimeRunning, store.RuntimeStarting:
		return rt, false, nil
	case store.RuntimePaused, store.RuntimeArchived:
		rt, err = g.o.Runtimes.Resume(ctx, rt.ID)
	case store.RuntimeIdle:
		rt, err = g.o.Runtimes.Start(ctx, rt.ID, nil)
	default:
		return rt, false, errdefs.Conflict("sandbox_failed", "sandbox %s failed (%s): kill it and create another", rt.ID, rt.StatusReason)
	}
	return rt, true, err
}
