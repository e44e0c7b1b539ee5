package agentconn_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestTerminal(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	term, err := a.client.Terminal(ctx, agentconn.TerminalRequest{
		Argv: []string{"sh"},
		Env:  map[string]string{"PS1": "$ "},
		Rows: 30, Cols: 90,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()

	io.WriteString(term, "stty size; echo TERM=$TERM; tty\n")
	out := testenv.ReadUntil(t, term, "/dev/pts/")
	if !strings.Contains(out, "30 90") || !strings.Contains(out, "TERM=xterm-256color") {
		t.Fatalf("initial terminal: %q", out)
	}
	if err := term.Resize(40, 100); err != nil {
		t.Fatal(err)
	}
	io.WriteString(term, "stty size\n")
	testenv.ReadUntil(t, term, "40 100")

	io.WriteString(term, "exit 5\n")
	if _, err := io.Copy(io.Discard, term); err != nil {
		t.Fatal(err)
	}
	st, ok := term.Exit()
	if !ok || st.Code != 5 {
		t.Fatalf("exit %+v %v", st, ok)
	}

	err = term.Resize(0, 10)
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_size")
	_, err = a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"/no/such/shell"}})
	wantCode(t, err, errdefs.ErrNotFound, "command_not_found")
}

func TestExecPTY(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	es, err := a.client.Exec(ctx, agentconn.ExecRequest{
		Argv: []string{"sh", "-c", "stty size; read x; stty size"},
		PTY:  &agentconn.PTY{Rows: 10, Cols: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	var out bytes.Buffer
	for !strings.Contains(out.String(), "10 20") {
		ev, err := es.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Stream != agentconn.Stdout {
			t.Fatalf("PTY output on %v", ev.Stream)
		}
		out.Write(ev.Data)
	}
	if err := es.Resize(50, 60); err != nil {
		t.Fatal(err)
	}
	if _, err := es.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	st, err := es.Wait(&out, nil)
	if err != nil || st.Code != 0 || !strings.Contains(out.String(), "50 60") {
		t.Fatalf("exit %+v %v, output %q", st, err, out.String())
	}
	// Resizing a process without a terminal is refused.
	plain, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Resize(10, 10); err != nil {
		t.Fatal(err) // sent; the agent refuses it and ends the call
	}
	_, err = plain.Wait(nil, nil)
	wantCode(t, err, errdefs.ErrFailedPrecondition, "not_a_terminal")
}
