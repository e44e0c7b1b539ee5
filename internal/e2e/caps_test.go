package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSessionCaps: concurrent exec streams and terminals are capped per
// runtime and per user. One over a cap answers 429 with a code naming the
// cap; a stream that ends gives its place back.
func TestSessionCaps(t *testing.T) {
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.DockerProvider(t, instance),
		Instance: instance,
		Image:    testenv.TestImage,
		Limits:   api.Limits{ExecPerRuntime: 2, ExecPerUser: 3, TerminalsPerRuntime: 1, TerminalsPerUser: 5},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	var rids []string
	for _, name := range []string{"p1", "p2"} {
		var p pc.Project
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
			Name: name, Runtime: &pc.RuntimeConfig{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64},
		}).Decode(t, &p)
		env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
		rids = append(rids, p.RuntimeID)
	}
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sleep := pc.ExecRequest{Argv: []string{"sleep", "300"}}
	open := func(rid string) (*pc.ExecStream, error) {
		return sdk.ExecStream(ctx, "acme", "dev", rid, sleep)
	}
	wantCap := func(err error, code string) {
		t.Helper()
		var ae *pc.Error
		if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Code != code {
			t.Fatalf("err = %v, want 429 %s", err, code)
		}
	}

	// Two streams fill the first runtime's place.
	var streams []*pc.ExecStream
	for range 2 {
		s, err := open(rids[0])
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	_, err = open(rids[0])
	wantCap(err, "too_many_exec_streams_per_runtime")
	// A background exec holds no stream, so it is not counted.
	if _, err := sdk.Exec(ctx, "acme", "dev", rids[0], pc.ExecRequest{Argv: []string{"true"}, Background: true}); err != nil {
		t.Fatalf("a background exec at the cap: %v", err)
	}
	// The other runtime has room, up to the user's three.
	s, err := open(rids[1])
	if err != nil {
		t.Fatal(err)
	}
	streams = append(streams, s)
	_, err = open(rids[1])
	wantCap(err, "too_many_exec_streams_per_user")

	// A stream that ends gives its place back.
	streams[0].Close()
	// The server sees the end when the stream's request ends.
	testenv.Eventually(t, func() error {
		s, err := open(rids[0])
		if err == nil {
			streams = append(streams, s)
			return nil
		}
		if ae := (*pc.Error)(nil); !errors.As(err, &ae) || ae.StatusCode != 429 {
			t.Fatalf("waiting for a place: %v", err)
		}
		return fmt.Errorf("the ended stream's place was not given back: %w", err)
	})
	for _, s := range streams[1:] {
		s.Close()
	}

	// One terminal per runtime.
	tm, err := sdk.Terminal(ctx, "acme", "dev", rids[0], pc.TerminalOptions{Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	_, err = sdk.Terminal(ctx, "acme", "dev", rids[0], pc.TerminalOptions{Argv: []string{"sleep", "300"}})
	wantCap(err, "too_many_terminals_per_runtime")
	tm2, err := sdk.Terminal(ctx, "acme", "dev", rids[1], pc.TerminalOptions{Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatalf("a terminal on another runtime: %v", err)
	}
	tm2.Close()
}

// TestRevocationEndsStreams: revoking a key ends the exec streams and
// terminals open with it at once, not at its next request.
func TestRevocationEndsStreams(t *testing.T) {
	env, _, p, rtPath := dockerEnv(t)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", pc.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", pc.AddMemberRequest{Member: "bob@example.com"})
	var key pc.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/acme/keys", pc.CreateKeyRequest{Member: "bob@example.com"}).Decode(t, &key)
	bob, err := pc.New(env.URL, key.Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	es, err := bob.ExecStream(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	tm, err := bob.Terminal(ctx, "acme", "dev", p.RuntimeID, pc.TerminalOptions{Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	// A collected exec's answer is the revoked key's refusal, whichever
	// way the call reached the agent: without stdin on a connection of
	// its own, with stdin by the agent's HTTP/2 stream.
	collected := make(chan error, 2)
	for _, req := range []pc.ExecRequest{
		{Argv: []string{"sleep", "301"}},
		{Argv: []string{"sleep", "301"}, Stdin: []byte("x")},
	} {
		go func() {
			_, err := bob.Exec(ctx, "acme", "dev", p.RuntimeID, req)
			collected <- err
		}()
	}
	testenv.WaitFor(t, "the collected execs' sleeps running", func() bool {
		var res pc.ExecResult
		env.Must(t, 200, "POST", rtPath+"/exec", pc.ExecRequest{Argv: []string{"sh", "-c", "ps -o args | grep -c '^sleep 301'"}}).Decode(t, &res)
		return strings.TrimSpace(string(res.Stdout)) == "2"
	})

	env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+key.ID, nil)
	ended := make(chan string, 2)
	go func() {
		for {
			// The process sleeps on: only the stream's end stops this.
			if ev, err := es.Recv(); err != nil || ev.Event == pc.EventExit {
				ended <- "exec"
				return
			}
		}
	}()
	go func() {
		b := make([]byte, 256)
		for {
			if _, err := tm.Read(b); err != nil {
				ended <- "terminal"
				return
			}
		}
	}()
	for range 2 {
		select {
		case <-ended:
		case <-time.After(2 * time.Minute):
			t.Fatal("a stream of a revoked key is still open")
		}
	}
	for range 2 {
		select {
		case err := <-collected:
			var ae *pc.Error
			if !errors.As(err, &ae) || ae.StatusCode != 401 || ae.Code != "invalid_api_key" {
				t.Fatalf("a collected exec of a key revoked meanwhile: %v, want 401 invalid_api_key", err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("a collected exec of a revoked key is still running")
		}
	}
	if _, err := bob.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"true"}}); err == nil {
		t.Fatal("the revoked key still execs")
	}
}
