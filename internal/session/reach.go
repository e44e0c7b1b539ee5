package session

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// CodeModelUnreachable ends a turn whose harness cannot reach its model:
// the egress proxy refused, or could not resolve, the model's host for the
// turn's sandbox. The CLIs retry that for minutes, or wait silently, until
// the turn's timeout; the turn ends instead, saying which host and why.
const CodeModelUnreachable = "model_unreachable"

// defaultEgressPoll is how often a turn reads its sandbox's new egress
// decisions.
const defaultEgressPoll = time.Second

// recordBound bounds how long a turn whose harness failed waits for the
// egress log to hold what the proxy decided before it failed. The recorder
// answers as soon as it has written; this bounds a stuck one.
const recordBound = 30 * time.Second

// modelWatch is what a turn in a proxy sandbox watches: the sandbox's
// decisions about the harness's model endpoint since the turn began, read
// in order, newest last.
type modelWatch struct {
	runtimeID string
	sandboxID string
	endpoint  harness.Endpoint
	network   store.NetworkConfig // the runtime's rules, for the hint

	// after is the last decision read; from since at first.
	afterAt time.Time
	afterID string
	// refusal is the newest decision that counts, if it refused; nil when
	// the newest one let the request through. unresolved counts the DNS
	// failures in a row it ends.
	refusal    *store.EgressDecision
	unresolved int
}

// modelWatchOf returns the watch for a turn calling its model at e in
// sandbox sb of runtime rt, or false when there is nothing to watch: a
// sandbox not in proxy mode decides nothing through the proxy.
func modelWatchOf(rt store.Runtime, sb store.Sandbox, e harness.Endpoint, since time.Time) (*modelWatch, bool) {
	if sb.Network != egress.ModeProxy || e.Host == "" {
		return nil, false
	}
	return &modelWatch{runtimeID: rt.ID, sandboxID: sb.ID, endpoint: e, network: rt.Config.Network, afterAt: since}, true
}

// add takes the next decision. Only the newest one counts: a request let
// through, or one the upstream failed (the rules allowed it; the CLI's
// retries are for that), clears an earlier refusal; an unreadable policy
// (503, try again) says nothing about the rules.
func (w *modelWatch) add(d store.EgressDecision) {
	w.afterAt, w.afterID = d.At, d.ID
	switch egress.Refusal(d.Refusal) {
	case egress.RefusalNone, egress.RefusalUpstream:
		w.refusal, w.unresolved = nil, 0
	case egress.RefusalNotAllowed, egress.RefusalDenied, egress.RefusalInternal:
		w.refusal, w.unresolved = &d, 0
	case egress.RefusalUnresolved:
		w.refusal = &d
		w.unresolved++
	}
}

// egressLog is the store's log of the egress proxy's decisions.
type egressLog interface {
	SandboxEgress(ctx context.Context, q store.EgressQuery) ([]store.EgressDecision, error)
}

// read takes the decisions recorded since the last read.
func (w *modelWatch) read(ctx context.Context, st egressLog) error {
	for {
		ds, err := st.SandboxEgress(ctx, store.EgressQuery{
			SandboxID: w.sandboxID, Hosts: []string{w.endpoint.Host}, Port: w.endpoint.Port,
			AfterAt: w.afterAt, AfterID: w.afterID, Limit: store.MaxLimit,
		})
		if err != nil {
			return err
		}
		for _, d := range ds {
			w.add(d)
		}
		if len(ds) < store.MaxLimit {
			return nil
		}
	}
}

// refused returns the error ending the turn if the newest decision
// refused the model endpoint. While the harness runs, one failure to
// resolve may pass (the CLI retries, and the next lookup may answer); once
// it has failed, the newest decision is its account.
func (w *modelWatch) refused(harnessFailed bool) *harness.TurnError {
	if w.refusal == nil || egress.Refusal(w.refusal.Refusal) == egress.RefusalUnresolved && w.unresolved < 2 && !harnessFailed {
		return nil
	}
	return w.unreachableError(*w.refusal)
}

// watchModel reads the egress log every poll until ctx ends, and calls
// unreachable once the newest decision refuses the model endpoint. A store
// that cannot be read turns the watch off, and says so in the log.
func (s *Service) watchModel(ctx context.Context, w *modelWatch, unreachable func(*harness.TurnError)) {
	t := time.NewTicker(s.egressPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := w.read(ctx, s.store); err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("the turn no longer watches its model endpoint: the egress log cannot be read",
					"runtime", w.runtimeID, "host", w.endpoint.Host, "err", err)
			}
			return
		}
		if e := w.refused(false); e != nil {
			unreachable(e)
			return
		}
	}
}

// refusedAtEnd reads, once the harness has failed, what the proxy decided
// up to then: it waits for the egress recorder to have written it (within
// recordBound), then reads the rest of the log.
func (s *Service) refusedAtEnd(ctx context.Context, w *modelWatch) *harness.TurnError {
	if s.egressRecorded != nil {
		rctx, cancel := context.WithTimeout(ctx, recordBound)
		err := s.egressRecorded(rctx, time.Now())
		cancel()
		if err != nil {
			s.logger.Warn("the egress log may lack the turn's last decisions", "runtime", w.runtimeID, "err", err)
		}
	}
	if err := w.read(ctx, s.store); err != nil {
		s.logger.Warn("the turn cannot tell whether its model endpoint was refused: the egress log cannot be read",
			"runtime", w.runtimeID, "host", w.endpoint.Host, "err", err)
		return nil
	}
	return w.refused(true)
}

// unreachableError says which host the proxy would not let the harness
// reach, why, and what would change that.
func (w *modelWatch) unreachableError(d store.EgressDecision) *harness.TurnError {
	host := d.Host
	rule := host
	if d.Port != 443 && d.Port != 80 {
		rule = host + ":" + strconv.Itoa(d.Port)
	}
	var why, fix string
	switch egress.Refusal(d.Refusal) {
	case egress.RefusalUnresolved:
		why = "could not resolve it (DNS failure)"
		fix = "no network rule changes that: check the name, and the DNS of paddock's host"
	case egress.RefusalDenied:
		why = "refused it: " + d.Reason + " (deny)"
		fix = w.denyFix(host, d.Port)
	case egress.RefusalInternal:
		why = "refused it: " + d.Reason
		fix = "an internal address is opened only by the installation's configuration (egress.hosts)"
	default:
		why = "refused it: not allowed (" + d.Reason + ")"
		allow := append(append([]string(nil), w.network.Allow...), rule)
		fix = "add it to the runtime's allow rules, keeping the others: " + setCommand(w.runtimeID, "--allow", allow)
	}
	return &harness.TurnError{Code: CodeModelUnreachable, Message: fmt.Sprintf(
		"the harness's model endpoint %s:%d cannot be reached from this sandbox: the egress proxy %s. The turn was stopped rather than left to retry until its timeout; %s",
		host, d.Port, why, fix)}
}

// denyFix says which deny rules to remove so that host:port is no longer
// refused.
func (w *modelWatch) denyFix(host string, port int) string {
	pol, err := egress.ParsePolicy(w.network.Allow, w.network.Deny)
	naming := []string(nil)
	if err == nil {
		naming = pol.DenyRules(host, port)
	}
	if len(naming) == 0 {
		return "remove the deny rule that covers its address from the runtime's deny rules"
	}
	var keep []string
	for _, r := range w.network.Deny {
		if !slices.Contains(naming, r) {
			keep = append(keep, r)
		}
	}
	return fmt.Sprintf("remove the deny rule %s from the runtime's deny rules, keeping the others: %s",
		strings.Join(naming, ", "), setCommand(w.runtimeID, "--deny", keep))
}

// setCommand is the CLI command setting a runtime's rule list (a flag
// replaces the whole list; an empty one clears it).
func setCommand(runtimeID, flag string, rules []string) string {
	cmd := "paddock runtime set " + runtimeID
	if len(rules) == 0 {
		return cmd + " " + flag + " ''"
	}
	for _, r := range rules {
		cmd += " " + flag + " " + shellWord(r)
	}
	return cmd
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9._:/\[\]-]+$`)

// shellWord quotes a rule for a POSIX shell when it needs it (*.pypi.org).
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// watch starts watching w, if there is one, until ctx ends; on a refusal
// it calls stop. The function it returns waits for the watch to end and
// gives the refusal, if there was one.
func (s *Service) watch(ctx context.Context, w *modelWatch, stop func()) func() *harness.TurnError {
	if w == nil {
		return func() *harness.TurnError { return nil }
	}
	var found *harness.TurnError
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.watchModel(ctx, w, func(e *harness.TurnError) {
			found = e
			stop()
		})
	}()
	return func() *harness.TurnError {
		<-done
		return found
	}
}
