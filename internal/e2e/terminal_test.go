package e2e

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

func TestTerminal(t *testing.T) {
	s := runningSandbox(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	tm, err := s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Rows: 12, Cols: 34})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	if tm.ID == "" || tm.PID == 0 {
		t.Fatalf("started %q %d", tm.ID, tm.PID)
	}
	screen := watchScreen(t, tm)
	io.WriteString(tm, "stty size; tty\n")
	screen.expect(t, "12 34")
	screen.expect(t, "/dev/pts/")
	if err := tm.Resize(56, 78); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tm, "stty size\n")
	screen.expect(t, "56 78")

	// Ctrl-C is a keystroke that reaches the sandbox: it interrupts the
	// foreground command, and the shell goes on. (The arithmetic makes
	// the marker differ from the echoed command line.)
	io.WriteString(tm, "echo $((40+2))go; sleep 1000\n")
	screen.expect(t, "42go")
	// Between the echo and the sleep the shell itself is in the
	// foreground, and a Ctrl-C then would not reach the sleep: wait until
	// the sleep runs (it has its name once it has been exec'd, after the
	// shell made its group the terminal's foreground).
	testenv.WaitFor(t, "the sleep to run", func() bool {
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"pidof", "sleep"}})
		return err == nil && res.Exit != nil && res.Exit.Code == 0
	})
	io.WriteString(tm, "\x03")
	screen.expect(t, "$ ") // the prompt (the user's, not root's) is back
	io.WriteString(tm, "echo status-$?\n")
	screen.expect(t, "status-130")

	// A refused control message is reported and the session goes on.
	if err := tm.Signal("NOPE"); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tm, "echo $((1+1))alive\n")
	screen.expect(t, "2alive")

	io.WriteString(tm, "exit 3\n")
	if err := screen.end(t); err != io.EOF {
		t.Fatalf("reading to the end: %v", err)
	}
	if st, ok := tm.Exit(); !ok || st.Code != 3 {
		t.Fatalf("exit %+v %v, want code 3", st, ok)
	}

	// A command instead of the shell, ended by a signal.
	sleeper, err := s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Close()
	if err := sleeper.Signal("TERM"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, sleeper); err != nil {
		t.Fatal(err)
	}
	if st, _ := sleeper.Exit(); st.Signal != "SIGTERM" {
		t.Fatalf("exit %+v, want SIGTERM", st)
	}

	// Errors before the upgrade keep their codes.
	_, err = s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Argv: []string{"no-such-shell"}})
	if !pc.IsCode(err, "command_not_found") || !errors.Is(err, pc.ErrNotFound) {
		t.Fatalf("missing command: %v", err)
	}
	_, err = s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Cwd: "relative"})
	if !pc.IsCode(err, "invalid_path") {
		t.Fatalf("relative cwd: %v", err)
	}
}
