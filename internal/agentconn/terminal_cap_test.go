package agentconn_test

import (
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

// TestTerminalCap: MaxTerminals bounds a scope's terminals, attached or
// detached in their grace; a re-attach takes no other place; a place comes
// back when its terminal is forgotten: its grace over, closed, or its exit
// read. Another scope has its own.
func TestTerminalCap(t *testing.T) {
	clock := newFakeClock()
	a := startAgent(t, shim.Options{Clock: clock, TerminalGrace: time.Minute})
	ctx := ctxT(t)
	open := func(scope string) (*agentconn.TerminalStream, error) {
		return a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sleep", "1000"}, Scope: scope, MaxTerminals: 2})
	}
	mustOpen := func(scope string) *agentconn.TerminalStream {
		t.Helper()
		term, err := open(scope)
		if err != nil {
			t.Fatalf("opening a terminal in %s: %v", scope, err)
		}
		t.Cleanup(func() { term.Close() })
		return term
	}
	refused := func(why string) {
		t.Helper()
		_, err := open("rt-a")
		wantCode(t, err, errdefs.ErrResourceExhausted, "too_many_terminals")
		if t.Failed() {
			t.Fatalf("(%s)", why)
		}
	}
	first, second := mustOpen("rt-a"), mustOpen("rt-a")
	refused("two attached")
	mustOpen("rt-b").Close() // another scope's bound is its own

	// Detached in its grace, it still counts.
	for len(clock.added) > 0 {
		<-clock.added
	}
	first.Detach()
	select {
	case <-clock.added:
	case <-ctx.Done():
		t.Fatal("no grace timer after the call was dropped")
	}
	refused("one attached, one detached")
	// Re-attaching takes no second place.
	again, err := a.client.AttachTerminal(ctx, "rt-a", first.TerminalID(), 0)
	if err != nil {
		t.Fatalf("re-attaching at the bound: %v", err)
	}
	refused("both attached again")
	again.Detach()
	<-clock.added
	clock.Advance(time.Minute)
	waitGone(t, first.PID())
	third := mustOpen("rt-a") // the grace over, its place is free
	refused("the grace's place taken again")

	// A close frees a place.
	second.Close()
	fourth := mustOpen("rt-a")
	refused("the closed one's place taken again")

	// So does an exit, once read.
	if err := fourth.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, fourth); err != nil {
		t.Fatal(err)
	}
	mustOpen("rt-a")
	refused("the exited one's place taken again")
	third.Close()
}
