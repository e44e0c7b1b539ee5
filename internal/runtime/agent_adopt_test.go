package runtime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// heldEnvAgent is an agent stand-in on a unix socket: it answers health
// checks, takes a warm sandbox's stand-in environment (no RUNTIME
// variable) at once, and holds a runtime's environment until the test
// answers it with reply.
type heldEnvAgent struct {
	agentpbconnect.UnimplementedAgentServiceHandler
	got   chan map[string]string // a runtime's environment, as it arrives
	reply chan error             // its answer
	// answered is set just before a runtime's environment is answered.
	answered atomic.Bool
	dials    atomic.Int64
}

func (a *heldEnvAgent) Health(context.Context, *connect.Request[agentpb.HealthRequest]) (*connect.Response[agentpb.HealthResponse], error) {
	return connect.NewResponse(&agentpb.HealthResponse{Version: "test"}), nil
}

func (a *heldEnvAgent) SetEnv(ctx context.Context, req *connect.Request[agentpb.SetEnvRequest]) (*connect.Response[agentpb.SetEnvResponse], error) {
	if req.Msg.Env["RUNTIME"] != "" {
		a.got <- req.Msg.Env
		select {
		case err := <-a.reply:
			a.answered.Store(true)
			if err != nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, err)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return connect.NewResponse(&agentpb.SetEnvResponse{Count: int32(len(req.Msg.Env))}), nil
}

// startHeldEnvAgent serves a heldEnvAgent until the test ends and returns
// it with a provider whose every sandbox's agent is it.
func startHeldEnvAgent(t *testing.T) (*heldEnvAgent, *fake.Provider) {
	dir, err := os.MkdirTemp("", "pda")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "agent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	a := &heldEnvAgent{got: make(chan map[string]string, 1), reply: make(chan error)}
	mux := http.NewServeMux()
	mux.Handle(agentpbconnect.NewAgentServiceHandler(a))
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &protos, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	prov := fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) {
		a.dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "unix", l.Addr().String())
	}})
	return a, prov
}

// TestAgentPoolAdoption: a claim's runtime environment goes over the warm
// sandbox's open link while the start goes on; calls on the runtime's link
// wait until the agent has it (a process must not start with the warm
// sandbox's stand-in environment), or until their own context ends. An
// agent that refuses it costs the link: the next call gets a link of its
// own, which sends the environment again before it is used; a link
// forgotten meanwhile is no failure of the adoption.
func TestAgentPoolAdoption(t *testing.T) {
	agent, prov := startHeldEnvAgent(t)
	ctx := t.Context()
	pool := newAgentPool()
	defer pool.close()
	pool.env = func(_ context.Context, sb store.Sandbox) (map[string]string, error) {
		return map[string]string{"RUNTIME": sb.RuntimeID}, nil
	}
	row := func(id, runtimeID string) store.Sandbox {
		h, err := prov.Create(ctx, provider.Spec{SandboxID: id, Instance: "test", Image: "img", Workspace: "ws-" + id})
		if err != nil {
			t.Fatal(err)
		}
		if err := prov.Start(ctx, h); err != nil {
			t.Fatal(err)
		}
		return store.Sandbox{ID: id, RuntimeID: runtimeID, Provider: prov.Name(), ProviderSandboxID: h.ID, ProviderState: h.State}
	}
	// claim opens warm sandbox id's link, as the pool's fill does, then
	// adopts it for runtimeID and sends the environment in the background.
	claim := func(id, runtimeID string) (adopted *agentconn.Client, sent <-chan error) {
		warm := row(id, "")
		c, err := pool.get(ctx, warmLink(id), warm, prov)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Health(ctx); err != nil {
			t.Fatal(err)
		}
		claimed := warm
		claimed.RuntimeID = runtimeID
		send := pool.adopt(id, runtimeID, claimed)
		if send == nil {
			t.Fatal("an open link was adopted with nothing to send")
		}
		out := make(chan error, 1)
		go func() { out <- send(ctx) }()
		if env := <-agent.got; env["RUNTIME"] != runtimeID {
			t.Fatalf("the agent was sent %v, want the runtime %s's environment", env, runtimeID)
		}
		return c, out
	}
	// current is the row runtimeID's link is for.
	current := func(runtimeID string) store.Sandbox {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return *pool.entries[runtimeID].sb.Load()
	}
	// get is a call's look-up of runtimeID's client, in the background.
	type got struct {
		c        *agentconn.Client
		err      error
		answered bool // the agent had answered the environment by then
	}
	get := func(ctx context.Context, runtimeID string, sb store.Sandbox) <-chan got {
		out := make(chan got, 1)
		go func() {
			c, err := pool.get(ctx, runtimeID, sb, prov)
			out <- got{c, err, agent.answered.Load()}
		}()
		return out
	}

	// Taken: the call waits for the agent's answer, then has the link.
	adopted, sent := claim("sb-1", "rt-1")
	claimed := current("rt-1")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if r := <-get(cancelled, "rt-1", claimed); r.err == nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("a call whose context ended while the environment was on its way: %v, %v; want it to end with its context", r.c, r.err)
	}
	waiting := get(ctx, "rt-1", claimed)
	agent.reply <- nil
	if err := <-sent; err != nil {
		t.Fatalf("sending the environment: %v", err)
	}
	if r := <-waiting; r.err != nil || r.c != adopted || !r.answered {
		t.Fatalf("a call during the adoption: same link %v, err %v, after the agent's answer %v; want the adopted link after it", r.c == adopted, r.err, r.answered)
	}

	// Refused: the link is dropped, and the next call dials its own,
	// which sends the environment before it is used.
	agent.answered.Store(false)
	adopted, sent = claim("sb-2", "rt-2")
	claimed = current("rt-2")
	waiting = get(ctx, "rt-2", claimed)
	agent.reply <- errors.New("no")
	if err := <-sent; err == nil {
		t.Fatal("a refused environment was not reported")
	}
	r := <-waiting
	if r.err != nil || r.c == adopted || !r.answered {
		t.Fatalf("a call after a refused adoption: err %v, the dropped link %v, after the agent's answer %v; want a link of its own", r.err, r.c == adopted, r.answered)
	}
	dials := agent.dials.Load()
	health := make(chan error, 1)
	go func() { health <- r.c.Health(ctx) }()
	if env := <-agent.got; env["RUNTIME"] != "rt-2" {
		t.Fatalf("the new link sent %v first, want the runtime's environment", env)
	}
	agent.reply <- nil
	if err := <-health; err != nil {
		t.Fatalf("a call on the new link: %v", err)
	}
	if agent.dials.Load() <= dials {
		t.Fatal("the new link was not dialed")
	}

	// A link forgotten while its environment is on its way (a stop or
	// a delete right after the start) ends the send, and is no error.
	_, sent = claim("sb-4", "rt-4")
	pool.forget("rt-4", "")
	if err := <-sent; err != nil {
		t.Fatalf("the send on a forgotten link: %v, want no error", err)
	}

	// A call that came first, once the claim's row said running, and
	// dialed a link of its own keeps it: the warm link is closed, and
	// there is nothing to send.
	warm := row("sb-3", "")
	if _, err := pool.get(ctx, warmLink("sb-3"), warm, prov); err != nil {
		t.Fatal(err)
	}
	claimed = warm
	claimed.RuntimeID = "rt-3"
	first, err := pool.get(ctx, "rt-3", claimed, prov)
	if err != nil {
		t.Fatal(err)
	}
	if send := pool.adopt("sb-3", "rt-3", claimed); send != nil {
		t.Fatal("a link was adopted over the one a call had dialed")
	}
	if c, err := pool.get(ctx, "rt-3", claimed, prov); err != nil || c != first {
		t.Fatalf("after the adoption: the call's own link %v, %v", c == first, err)
	}
	pool.mu.Lock()
	_, kept := pool.entries[warmLink("sb-3")]
	pool.mu.Unlock()
	if kept {
		t.Fatal("the warm link was kept")
	}
}
