package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// terminalEnv is a server whose fake provider's sandboxes are a real
// agent (in this process, with opts), with org acme, workspace dev and
// running runtimes of projects a and b.
func terminalEnv(t *testing.T, opts shim.Options, limits api.Limits) (env *servertest.Env, a, b string) {
	t.Helper()
	dial := shimtest.ServeWith(t, opts)
	env = servertest.New(t, servertest.Options{Limits: limits,
		Provider: fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var ids []string
	for _, name := range []string{"a", "b"} {
		var p client.Project
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: name}).Decode(t, &p)
		env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
		ids = append(ids, p.RuntimeID)
	}
	return env, ids[0], ids[1]
}

// wantTerminalClosed waits for a terminal's process to end (left to its
// grace, it would run on), then for the agent to forget the terminal. A
// re-attach caught between the two must replay the exit of a killed
// process.
func wantTerminalClosed(t *testing.T, env *servertest.Env, runtimeID string, pid int, termID string) {
	t.Helper()
	testenv.WaitFor(t, "the terminal's process to end", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	admin := adminClient(t, env)
	testenv.Eventually(t, func() error {
		tm, err := admin.Terminal(t.Context(), "acme", "dev", runtimeID, client.TerminalOptions{Attach: termID})
		if client.IsCode(err, "terminal_not_found") {
			return nil
		}
		if err != nil {
			t.Fatalf("re-attaching the cut terminal: %v, want terminal_not_found", err)
		}
		defer tm.Close()
		if _, err := io.Copy(io.Discard, tm); err != nil {
			t.Fatalf("the cut terminal, re-attached, reads no exit: %v", err)
		}
		if st, ok := tm.Exit(); !ok || st.Signal != "SIGKILL" {
			t.Fatalf("the cut terminal's exit: %+v %v, want killed", st, ok)
		}
		return errors.New("the agent still keeps the cut terminal")
	})
}

// adminClient is a client of env with its key.
func adminClient(t *testing.T, env *servertest.Env) *client.Client {
	t.Helper()
	sdk, err := client.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	return sdk
}

// TestTerminalEndsWithItsCredential: revoking the key a terminal was
// opened with closes the terminal at once; the agent keeps nothing for a
// re-attach (its grace here is an hour).
func TestTerminalEndsWithItsCredential(t *testing.T) {
	env, rt, _ := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{})
	bob := consoleMember(t, env, "bob@example.com", "member")
	sdk, err := client.New(env.URL, bob.Key)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := sdk.Terminal(t.Context(), "acme", "dev", rt, client.TerminalOptions{Argv: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	io.WriteString(tm, "echo ready-$((1+1))\n")
	testenv.ReadUntil(t, tm, "ready-2")

	env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil)
	if _, err := io.Copy(io.Discard, tm); err == nil {
		t.Fatal("the revoked key's terminal read to an exit")
	}
	wantTerminalClosed(t, env, rt, tm.PID, tm.TerminalID)
}

// TestDetachedTerminalEndsWithItsCredential: a terminal whose link
// dropped, waiting in its grace (an hour here), is closed when the key
// that opened it is revoked.
func TestDetachedTerminalEndsWithItsCredential(t *testing.T) {
	// One terminal per user, so that bob's next one shows the server has
	// ended the session of his dropped one.
	env, a, b := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{TerminalsPerUser: 1})
	bob := consoleMember(t, env, "bob@example.com", "member")
	sdk, drop := droppableClient(t, env.URL, bob.Key)
	tm, err := sdk.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	drop()
	waitPlace(t, sdk, b)

	env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil)
	wantTerminalClosed(t, env, a, tm.PID, tm.TerminalID)
}

// waitPlace waits until sdk's user may open a terminal on runtime rt
// (opening and closing one), that is, until the server has ended the
// sessions of their terminals whose links dropped.
func waitPlace(t *testing.T, sdk *client.Client, rt string) {
	t.Helper()
	testenv.Eventually(t, func() error {
		tb, err := sdk.Terminal(t.Context(), "acme", "dev", rt, client.TerminalOptions{Argv: []string{"true"}})
		if err != nil {
			if !client.IsCode(err, "too_many_terminals_per_user") {
				t.Fatalf("waiting for a place: %v", err)
			}
			return fmt.Errorf("a dropped terminal still holds its user's place: %w", err)
		}
		_, _ = io.Copy(io.Discard, tb)
		return tb.Close()
	})
}

// TestTerminalEndsWithItsConsoleSession: signing out of the console
// closes the terminals opened through its session at once.
func TestTerminalEndsWithItsConsoleSession(t *testing.T) {
	env, rt, _ := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	u := "ws" + strings.TrimPrefix(env.URL, "http") + "/api/v1/org/acme/ws/dev/runtimes/" + rt + "/terminal?argv=sh"
	hdr := http.Header{"Origin": {env.URL}}
	hdr.Set("Cookie", (&http.Cookie{Name: "paddock_console", Value: b.cookie}).String())
	conn, resp, err := websocket.Dial(t.Context(), u, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("the console's terminal: %v (%v)", err, resp)
	}
	defer conn.CloseNow()
	typ, data, err := conn.Read(t.Context())
	var started client.TerminalMessage
	if err != nil || typ != websocket.MessageText || json.Unmarshal(data, &started) != nil || started.Type != client.TerminalStarted {
		t.Fatalf("first message: %v %s %v", typ, data, err)
	}

	if r, _ := b.do(t, "DELETE", "/api/v1/console/session", nil); r.Status != 204 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	for {
		if _, _, err := conn.Read(t.Context()); err != nil {
			break
		}
	}
	wantTerminalClosed(t, env, rt, started.PID, started.TerminalID)
}

// TestTerminalCutLateStillCloses: a sign-out whose cut of the terminal
// runs only once the session's handler is ending (a loaded machine) still
// closes the terminal: the session's end does not detach it first.
func TestTerminalCutLateStillCloses(t *testing.T) {
	env, rt, _ := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	ending := make(chan struct{})
	endingOnce := sync.OnceFunc(func() { close(ending) })
	t.Cleanup(endingOnce)
	api.SetTerminalHook(t, func(point, _ string) {
		switch point {
		case "end":
			endingOnce()
		case "cut":
			<-ending
		}
	})
	// Output that goes on ends the session's output side once the
	// sign-out has closed its WebSocket, without waiting for the cut.
	argv := url.Values{"argv": {"sh", "-c", "while :; do echo tick; sleep 0.05; done"}}
	u := "ws" + strings.TrimPrefix(env.URL, "http") + "/api/v1/org/acme/ws/dev/runtimes/" + rt + "/terminal?" + argv.Encode()
	hdr := http.Header{"Origin": {env.URL}}
	hdr.Set("Cookie", (&http.Cookie{Name: "paddock_console", Value: b.cookie}).String())
	conn, resp, err := websocket.Dial(t.Context(), u, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("the console's terminal: %v (%v)", err, resp)
	}
	defer conn.CloseNow()
	typ, data, err := conn.Read(t.Context())
	var started client.TerminalMessage
	if err != nil || typ != websocket.MessageText || json.Unmarshal(data, &started) != nil || started.Type != client.TerminalStarted {
		t.Fatalf("first message: %v %s %v", typ, data, err)
	}

	if r, _ := b.do(t, "DELETE", "/api/v1/console/session", nil); r.Status != 204 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	for {
		if _, _, err := conn.Read(t.Context()); err != nil {
			break
		}
	}
	wantTerminalClosed(t, env, rt, started.PID, started.TerminalID)
}

// TestTerminalEndsWithItsCredentialWhileParking: a credential or
// membership that ends after a terminal's link dropped, before the
// server has parked the detached terminal, still closes it.
func TestTerminalEndsWithItsCredentialWhileParking(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(bob client.CreatedKey) string // the path to DELETE
	}{
		{"revoked key", func(bob client.CreatedKey) string { return "/api/v1/org/acme/keys/" + bob.ID }},
		{"removed member", func(client.CreatedKey) string { return "/api/v1/org/acme/members/bob@example.com" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, a, _ := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{})
			bob := consoleMember(t, env, "bob@example.com", "member")
			parking, ended := make(chan struct{}), make(chan struct{})
			endedOnce := sync.OnceFunc(func() { close(ended) })
			t.Cleanup(endedOnce) // a failed test lets the parking go on
			var once sync.Once
			api.SetTerminalHook(t, func(point, _ string) {
				if point == "park" {
					once.Do(func() { close(parking); <-ended })
				}
			})
			sdk, drop := droppableClient(t, env.URL, bob.Key)
			tm, err := sdk.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Argv: []string{"sleep", "1000"}})
			if err != nil {
				t.Fatal(err)
			}
			drop()
			<-parking
			env.Must(t, 204, "DELETE", tc.end(bob), nil)
			endedOnce()
			wantTerminalClosed(t, env, a, tm.PID, tm.TerminalID)
		})
	}
}

// TestTerminalSignedOutWhileOpening: a sign-out that lands after the
// terminal's request was authenticated, before its stream is registered
// under the session, refuses the terminal (401 invalid_session) instead
// of leaving it running under a session that is gone.
func TestTerminalSignedOutWhileOpening(t *testing.T) {
	env, rt, _ := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	opening, signedOut := make(chan struct{}), make(chan struct{})
	signedOutOnce := sync.OnceFunc(func() { close(signedOut) })
	t.Cleanup(signedOutOnce)
	var once sync.Once
	api.SetTerminalHook(t, func(point, _ string) {
		if point == "open" {
			once.Do(func() { close(opening); <-signedOut })
		}
	})
	u := "ws" + strings.TrimPrefix(env.URL, "http") + "/api/v1/org/acme/ws/dev/runtimes/" + rt + "/terminal?argv=sh"
	hdr := http.Header{"Origin": {env.URL}}
	hdr.Set("Cookie", (&http.Cookie{Name: "paddock_console", Value: b.cookie}).String())
	type dialed struct {
		conn *websocket.Conn
		resp *http.Response
		err  error
	}
	done := make(chan dialed, 1)
	go func() {
		conn, resp, err := websocket.Dial(t.Context(), u, &websocket.DialOptions{HTTPHeader: hdr})
		done <- dialed{conn, resp, err}
	}()
	<-opening
	if r, _ := b.do(t, "DELETE", "/api/v1/console/session", nil); r.Status != 204 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	signedOutOnce()
	d := <-done
	if d.err == nil {
		d.conn.CloseNow()
		t.Fatal("a terminal opened through a session signed out while it was opening")
	}
	resp, err := d.resp, d.err
	if resp == nil || resp.StatusCode != 401 {
		t.Fatalf("the terminal of a session signed out while it was opening: %v (%v), want 401", err, resp)
	}
}

// TestTerminalCapCountsDetached: a terminal whose link dropped holds its
// place in its runtime's cap through its grace, so opening and dropping
// terminals never gets past the cap; re-attaching one takes no second
// place, and a closed one gives its place back.
func TestTerminalCapCountsDetached(t *testing.T) {
	// One terminal per user, so that a user's next one on runtime b shows
	// the server has ended the session of their dropped one.
	env, a, b := terminalEnv(t, shim.Options{TerminalGrace: time.Hour}, api.Limits{TerminalsPerRuntime: 2, TerminalsPerUser: 1})
	var dropped []*client.Terminal
	for _, who := range []string{"bob@example.com", "carol@example.com"} {
		key := consoleMember(t, env, who, "member")
		sdk, drop := droppableClient(t, env.URL, key.Key)
		tm, err := sdk.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Argv: []string{"sleep", "1000"}})
		if err != nil {
			t.Fatal(err)
		}
		dropped = append(dropped, tm)
		drop()
		waitPlace(t, sdk, b)
	}
	admin := adminClient(t, env)
	// Both dropped terminals wait for a re-attach: runtime a is full.
	_, err := admin.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Argv: []string{"true"}})
	var ae *client.Error
	if !client.IsCode(err, "too_many_terminals_per_runtime") || !errors.As(err, &ae) || ae.StatusCode != 429 {
		t.Fatalf("a third terminal beside two dropped ones: %v, want 429 too_many_terminals_per_runtime", err)
	}
	// Re-attached, one counts once; closed, it gives its place back.
	again, err := admin.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Attach: dropped[0].TerminalID})
	if err != nil {
		t.Fatalf("re-attaching at the cap: %v", err)
	}
	again.Close()
	testenv.Eventually(t, func() error {
		tm, err := admin.Terminal(t.Context(), "acme", "dev", a, client.TerminalOptions{Argv: []string{"true"}})
		if err != nil {
			if ae := (*client.Error)(nil); !errors.As(err, &ae) || ae.StatusCode != 429 {
				t.Fatalf("waiting for the closed terminal's place: %v", err)
			}
			return err
		}
		_, _ = io.Copy(io.Discard, tm)
		return tm.Close()
	})
}
