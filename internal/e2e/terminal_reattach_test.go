package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestTerminalReattach: in a real sandbox, a terminal whose connection
// drops without a close keeps running; what it writes meanwhile is
// replayed when it is re-attached from the offset received so far.
func TestTerminalReattach(t *testing.T) {
	s := runningSandbox(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	dialer := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	sdk, err := pc.New(s.env.URL, s.env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	readUntil := func(r io.Reader, want string) string {
		t.Helper()
		var got bytes.Buffer
		buf := make([]byte, 4096)
		for !strings.Contains(got.String(), want) {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				t.Fatalf("reading until %q: %v; got %q", want, err, got.String())
			}
		}
		return got.String()
	}

	first, err := sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(first, "echo one-$((1+1))\n")
	readUntil(first, "one-2")
	io.WriteString(first, "while [ ! -e /tmp/go ]; do sleep 0.1; done; echo later-$((2+3)); touch /tmp/done\n")
	readUntil(first, "touch /tmp/done")
	off := first.Offset()
	mu.Lock()
	for _, c := range conns {
		c.Close() // the network fails: no close reaches the server
	}
	mu.Unlock()
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
	if out := readUntil(again, "later-5"); strings.Contains(out, "one-2") {
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
