package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// CodeModelUnreachable ends a turn whose harness cannot reach its model:
// the egress proxy refused, or could not resolve, the model's host for the
// turn's sandbox. The CLIs retry that for minutes, or wait silently, until
// the turn's timeout; the turn ends instead, saying which host and why.
const CodeModelUnreachable = "model_unreachable"

// defaultEgressPoll is how often a turn reads its sandbox's egress
// decisions.
const defaultEgressPoll = time.Second

// modelWatch is what a turn in a proxy sandbox watches: the sandbox's
// decisions about the harness's model hosts since the turn began.
type modelWatch struct {
	runtimeID string
	sandboxID string
	hosts     []string
	since     time.Time
}

// modelWatchOf returns the watch for a turn of a harness with hosts in
// sandbox sb, or false when there is nothing to watch: a sandbox not in
// proxy mode decides nothing through the proxy.
func modelWatchOf(sb store.Sandbox, hosts []string, since time.Time) (modelWatch, bool) {
	if sb.Network != egress.ModeProxy || len(hosts) == 0 {
		return modelWatch{}, false
	}
	return modelWatch{runtimeID: sb.RuntimeID, sandboxID: sb.ID, hosts: hosts, since: since}, true
}

// watchModel reads the egress log every poll until ctx ends, and calls
// unreachable once with the first refusal of a model host.
func (s *Service) watchModel(ctx context.Context, w modelWatch, unreachable func(*client.TurnError)) {
	t := time.NewTicker(s.egressPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if e := s.refusedModel(ctx, w); e != nil {
			unreachable(e)
			return
		}
	}
}

// refusedModel looks through the runtime's decisions since the turn began,
// newest first, for a refusal of one of w's hosts from w's sandbox. A
// failure of the upstream itself (refused connection, timeout) is not one:
// the CLI's retries are for that.
func (s *Service) refusedModel(ctx context.Context, w modelWatch) *client.TurnError {
	page := store.Page{Limit: store.MaxLimit}
	for {
		ds, next, err := s.store.ListEgress(ctx, w.runtimeID, page)
		if err != nil {
			return nil
		}
		for _, d := range ds {
			if d.At.Before(w.since) {
				return nil
			}
			if d.SandboxID == w.sandboxID && !d.Allowed && slices.Contains(w.hosts, d.Host) &&
				!strings.HasPrefix(d.Reason, "upstream failed") {
				return unreachableError(w.runtimeID, d)
			}
		}
		if next == "" {
			return nil
		}
		page.Cursor = next
	}
}

// unreachableError says which host the proxy would not let the harness
// reach, and by which rule.
func unreachableError(runtimeID string, d store.EgressDecision) *client.TurnError {
	why := "refused it: " + d.Reason
	switch {
	case strings.HasPrefix(d.Reason, "cannot resolve"):
		why = "could not resolve it (DNS failure)"
	case d.Reason == "no allow rule matches":
		why = "refused it: not allowed (no allow rule matches)"
	case strings.HasPrefix(d.Reason, "denied by rule"):
		why = "refused it: " + d.Reason + " (deny)"
	}
	return &client.TurnError{Code: CodeModelUnreachable, Message: fmt.Sprintf(
		"the harness's model endpoint %s:%d cannot be reached from this sandbox: the egress proxy %s. The turn was stopped rather than left to retry until its timeout; allow the host in the runtime's network rules (paddock runtime set %s --allow %s)",
		d.Host, d.Port, why, runtimeID, d.Host)}
}

// logFlush bounds how long a turn that failed waits for the egress log to
// hold what the proxy decided during it (the proxy's recorder writes in
// batches every quarter second).
const logFlush = 2 * time.Second

// refusedByNow looks for a refusal of w's hosts once the harness has
// failed, waiting up to logFlush for the proxy's last decisions.
func (s *Service) refusedByNow(ctx context.Context, w modelWatch) *client.TurnError {
	deadline := time.Now().Add(logFlush)
	for {
		if e := s.refusedModel(ctx, w); e != nil || time.Now().After(deadline) {
			return e
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watch starts watching w, if there is one, until ctx ends; on a refusal
// it calls stop. The function it returns waits for the watch to end and
// gives the refusal, if there was one.
func (s *Service) watch(ctx context.Context, w *modelWatch, stop func()) func() *client.TurnError {
	if w == nil {
		return func() *client.TurnError { return nil }
	}
	var found *client.TurnError
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.watchModel(ctx, *w, func(e *client.TurnError) {
			found = e
			stop()
		})
	}()
	return func() *client.TurnError {
		<-done
		return found
	}
}
