package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestTerminalReattach: in a real sandbox, a terminal whose connection
// drops without a close keeps running; what it writes meanwhile is
// replayed when it is re-attached from the offset received so far.
func TestTerminalReattach(t *testing.T) {
	s := runningSandbox(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tr, dropLinks := testenv.DroppableTransport(t)
	sdk, err := pc.New(s.env.URL, s.env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}

	first, err := sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(first, "echo one-$((1+1))\n")
	testenv.ReadUntil(t, first, "one-2")
	io.WriteString(first, "while [ ! -e /tmp/go ]; do sleep 0.1; done; echo later-$((2+3)); touch /tmp/done\n")
	testenv.ReadUntil(t, first, "touch /tmp/done")
	off := first.Offset()
	dropLinks() // the network fails: no close reaches the server
	if _, err := io.Copy(io.Discard, first); err == nil {
		t.Fatal("a dropped terminal read to its end")
	}

	s.run(t, "touch", "/tmp/go")
	s.run(t, "sh", "-c", "while [ ! -e /tmp/done ]; do sleep 0.1; done")
	again, err := sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Attach: first.TerminalID, Offset: off})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.PID != first.PID || again.Offset() != off {
		t.Fatalf("re-attached pid %d at %d, want pid %d at %d", again.PID, again.Offset(), first.PID, off)
	}
	if out := testenv.ReadUntil(t, again, "later-5"); strings.Contains(out, "one-2") {
		t.Fatalf("the replay from %d repeats earlier output: %q", off, out)
	}
	io.WriteString(again, "exit 4\n")
	if _, err := io.Copy(io.Discard, again); err != nil {
		t.Fatal(err)
	}
	if st, ok := again.Exit(); !ok || st.Code != 4 {
		t.Fatalf("exit %+v %v, want 4", st, ok)
	}
}
