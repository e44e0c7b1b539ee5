package api_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// agentEnv is an env whose fake provider's sandboxes reach a real agent
// serving in this process (so a sandbox's loopback is the host's), with
// org "acme" and its workspace "dev".
func agentEnv(t *testing.T) *servertest.Env {
	t.Helper()
	dial := shimtest.Serve(t)
	env := servertest.New(t, servertest.Options{Provider: fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	return env
}

// droppableClient returns a client of the server at url with key, and a
// func that drops its connections, as a network failure would: no close
// reaches the server.
func droppableClient(t *testing.T, url, key string) (*client.Client, func()) {
	t.Helper()
	tr, drop := testenv.DroppableTransport(t)
	sdk, err := client.New(url, key, client.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return sdk, drop
}

// TestTerminalReattach runs terminals against a real agent (in this
// process) behind two runtimes of the fake provider: opening one wakes a
// paused runtime; a dropped link leaves the terminal to be re-attached
// with its scrollback, through its own runtime only; a close kills it.
func TestTerminalReattach(t *testing.T) {
	env := agentEnv(t)
	var a, b client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "a"}).Decode(t, &a)
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "b"}).Decode(t, &b)
	aPath := "/api/v1/org/acme/ws/dev/runtimes/" + a.RuntimeID
	env.Must(t, 200, "POST", aPath+"/start", nil)
	env.Must(t, 200, "POST", aPath+"/pause", nil)
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+b.RuntimeID+"/start", nil)
	sdk, dropLinks := droppableClient(t, env.URL, env.Key)

	// Opening the terminal of a paused runtime wakes it.
	first, err := sdk.Terminal(t.Context(), "acme", "dev", a.RuntimeID, client.TerminalOptions{Argv: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	if rt := runtimeOf(t, env.Must(t, 200, "GET", aPath, nil)); rt.Status != client.RuntimeRunning {
		t.Fatalf("runtime after its terminal opened: %s, want running", rt.Status)
	}
	if !strings.HasPrefix(first.TerminalID, "t-") || first.Offset() != 0 {
		t.Fatalf("started: terminal id %q, offset %d", first.TerminalID, first.Offset())
	}
	io.WriteString(first, "echo one-$((1+1))\n")
	testenv.ReadUntil(t, first, "one-2")
	// Output that comes while nobody follows the terminal.
	io.WriteString(first, "sleep 0.2; echo later-$((2+3))\n")
	testenv.ReadUntil(t, first, "sleep 0.2")
	dropLinks() // no close: the connection just ends
	if _, err := io.Copy(io.Discard, first); err == nil {
		t.Fatal("the dropped terminal read to its end")
	}

	// Re-attached from 0, at a new size: the scrollback, then a live shell.
	again, err := sdk.Terminal(t.Context(), "acme", "dev", a.RuntimeID, client.TerminalOptions{Attach: first.TerminalID, Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.TerminalID != first.TerminalID || again.PID != first.PID || again.Offset() != 0 {
		t.Fatalf("re-attached %q pid %d at %d, want %q pid %d at 0", again.TerminalID, again.PID, again.Offset(), first.TerminalID, first.PID)
	}
	if out := testenv.ReadUntil(t, again, "later-5"); !strings.Contains(out, "one-2") {
		t.Fatalf("replay from 0 lacks the first output: %q", out)
	}
	io.WriteString(again, "stty size\n")
	testenv.ReadUntil(t, again, "30 100")

	// A terminal id re-attaches through its own runtime only.
	_, err = sdk.Terminal(t.Context(), "acme", "dev", b.RuntimeID, client.TerminalOptions{Attach: first.TerminalID})
	if !client.IsCode(err, "terminal_not_found") || !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another runtime's terminal: %v, want 404 terminal_not_found", err)
	}
	_, err = sdk.Terminal(t.Context(), "acme", "dev", a.RuntimeID, client.TerminalOptions{Attach: first.TerminalID, Offset: 1 << 40})
	if !client.IsCode(err, "invalid_offset") {
		t.Fatalf("offset past the output: %v, want invalid_offset", err)
	}

	// A close ends it at once.
	again.Close()
	testenv.WaitFor(t, "the closed terminal's process to end", func() bool {
		return errors.Is(syscall.Kill(first.PID, 0), syscall.ESRCH)
	})
}

// TestTerminalAttachRefusesBadInput: attach and offset are checked before
// anything reaches a sandbox.
func TestTerminalAttachRefusesBadInput(t *testing.T) {
	env, _, rtPath := setup(t)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	upgrade := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}
	id := "t-0123456789abcdef0123456789abcdef"
	for _, q := range []struct{ query, code string }{
		{"attach=p-1", "invalid_attach"},
		{"attach=" + id + "&argv=sh", "invalid_attach"},
		{"attach=" + id + "&user=root", "invalid_attach"},
		{"offset=3", "invalid_attach"},
		{"attach=" + id + "&offset=-1", "invalid_offset"},
		{"attach=" + id + "&offset=x", "invalid_offset"},
	} {
		if status, code := raw(t, env, "GET", rtPath+"/terminal?"+q.query, "", "", upgrade...); status != 400 || code != q.code {
			t.Errorf("%s: %d %s, want 400 %s", q.query, status, code, q.code)
		}
	}
}
