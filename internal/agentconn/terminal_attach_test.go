package agentconn_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestTerminalReattach drops a terminal's call without a close, lets the
// terminal write while nobody follows it, and re-attaches it: from the
// offset the first call had read to, then from 0 for the whole scrollback
// (taking it over from the second call), and ends it by its exit.
func TestTerminalReattach(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir := t.TempDir()
	first, err := a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sh"}, Env: map[string]string{"PS1": "$ "}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.TerminalID(), "t-") || first.Offset() != 0 {
		t.Fatalf("started: terminal id %q, offset %d", first.TerminalID(), first.Offset())
	}
	io.WriteString(first, "echo one-$((1+1))\n")
	testenv.ReadUntil(t, first, "one-2")
	// Output written only once the file appears, that is, while detached.
	io.WriteString(first, "while [ ! -e "+dir+"/go ]; do sleep 0.05; done; echo later-$((2+3)); touch "+dir+"/done\n")
	testenv.ReadUntil(t, first, "touch")
	off := first.Offset()
	first.Detach()

	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the detached terminal to write", func() bool {
		_, err := os.Stat(filepath.Join(dir, "done"))
		return err == nil
	})
	second, err := a.client.AttachTerminal(ctx, "", first.TerminalID(), off)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second.Offset() != off || second.PID() != first.PID() {
		t.Fatalf("re-attached at %d pid %d, want %d pid %d", second.Offset(), second.PID(), off, first.PID())
	}
	if out := testenv.ReadUntil(t, second, "later-5"); strings.Contains(out, "one-2") {
		t.Fatalf("replay from offset %d holds output from before it: %q", off, out)
	}

	// From 0: the whole scrollback; the second call is taken over.
	third, err := a.client.AttachTerminal(ctx, "", first.TerminalID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if out := testenv.ReadUntil(t, third, "later-5"); !strings.Contains(out, "one-2") {
		t.Fatalf("replay from 0 lacks the first output: %q", out)
	}
	_, err = io.Copy(io.Discard, second)
	wantCode(t, err, errdefs.ErrFailedPrecondition, "terminal_attached_elsewhere")

	io.WriteString(third, "exit 7\n")
	if _, err := io.Copy(io.Discard, third); err != nil {
		t.Fatal(err)
	}
	if st, ok := third.Exit(); !ok || st.Code != 7 {
		t.Fatalf("exit %+v %v, want 7", st, ok)
	}
	// Its exit reported, the terminal is gone.
	_, err = a.client.AttachTerminal(ctx, "", first.TerminalID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
}

// TestTerminalExitWhileDetached: a terminal that exits while nobody
// follows it is kept until a re-attach has its output and exit (a resize
// of the ended terminal, as the console sends on re-attaching, changes
// nothing), then forgotten.
func TestTerminalExitWhileDetached(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir := t.TempDir()
	term, err := a.client.Terminal(ctx, agentconn.TerminalRequest{
		Argv: []string{"sh", "-c", "echo ready; while [ ! -e " + dir + "/go ]; do sleep 0.05; done; echo bye-$((3*3)); exit 3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.ReadUntil(t, term, "ready")
	term.Detach()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitGone(t, term.PID())

	again, err := a.client.AttachTerminal(ctx, "", term.TerminalID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	// The call may have reported the exit and ended already: then the
	// resize cannot be sent; either way it must not stand in the exit's way.
	_ = again.Resize(30, 100)
	var out strings.Builder
	if _, err := io.Copy(&out, again); err != nil {
		t.Fatalf("reading the ended terminal: %v (got %q)", err, out.String())
	}
	if st, ok := again.Exit(); !ok || st.Code != 3 || !strings.Contains(out.String(), "ready") || !strings.Contains(out.String(), "bye-9") {
		t.Fatalf("exit %+v %v, output %q", st, ok, out.String())
	}
	_, err = a.client.AttachTerminal(ctx, "", term.TerminalID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
}

// TestTerminalAttachRefused: an unknown id, an offset past the output, and
// a terminal that was closed.
func TestTerminalAttachRefused(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	_, err := a.client.AttachTerminal(ctx, "", "t-00000000000000000000000000000000", 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
	_, err = a.client.AttachTerminal(ctx, "", "", 0)
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_attach")

	term, err := a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(term, "echo ready\n")
	testenv.ReadUntil(t, term, "ready")
	off := term.Offset()
	term.Detach()
	_, err = a.client.AttachTerminal(ctx, "", term.TerminalID(), off+1<<20)
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_offset")
	// Another scope's terminal is not found.
	_, err = a.client.AttachTerminal(ctx, "runtime-b", term.TerminalID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
	// An exec process is not a terminal to attach.
	_, err = a.client.AttachTerminal(ctx, "", term.ID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")

	// A close ends it at once, even re-attached.
	again, err := a.client.AttachTerminal(ctx, "", term.TerminalID(), off)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	waitGone(t, term.PID())
	_, err = a.client.AttachTerminal(ctx, "", term.TerminalID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
}

// TestTerminalGrace: a terminal nobody re-attaches is killed once its grace
// has passed, not before; re-attaching within it keeps it.
func TestTerminalGrace(t *testing.T) {
	clock := newFakeClock()
	a := startAgent(t, shim.Options{Clock: clock, TerminalGrace: time.Minute})
	ctx := ctxT(t)
	// detach drops the call and waits for the agent to start the grace.
	detach := func(term *agentconn.TerminalStream) {
		t.Helper()
		for len(clock.added) > 0 {
			<-clock.added
		}
		term.Detach()
		select {
		case <-clock.added:
		case <-ctx.Done():
			t.Fatal("no grace timer after the call was dropped")
		}
	}
	term, err := a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	detach(term)
	clock.Advance(59 * time.Second)
	if err := syscall.Kill(term.PID(), 0); err != nil {
		t.Fatalf("terminal gone within its grace: %v", err)
	}
	again, err := a.client.AttachTerminal(ctx, "", term.TerminalID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // attached: no grace runs
	if err := syscall.Kill(term.PID(), 0); err != nil {
		t.Fatalf("attached terminal killed: %v", err)
	}
	detach(again)
	clock.Advance(time.Minute)
	waitGone(t, term.PID())
	_, err = a.client.AttachTerminal(context.WithoutCancel(ctx), "", term.TerminalID(), 0)
	wantCode(t, err, errdefs.ErrNotFound, "terminal_not_found")
}
