package runtime

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// silentAgents is a provider whose agents accept connections and never
// answer: a call on them waits until its connection is closed.
type silentAgents struct {
	mu    sync.Mutex
	peers []net.Conn
}

func (s *silentAgents) dial(context.Context, string) (net.Conn, error) {
	client, peer := net.Pipe()
	s.mu.Lock()
	s.peers = append(s.peers, peer)
	s.mu.Unlock()
	return client, nil
}

func (s *silentAgents) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.peers {
		p.Close()
	}
}

// TestAgentPool checks that the pool ends the calls in flight on a
// sandbox's connections when the sandbox is replaced or forgotten and when
// the pool closes, and that a closed pool refuses.
func TestAgentPool(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, testAgentPool)
}

// testAgentPool is TestAgentPool in a synctest bubble, where synctest.Wait
// tells when a call is waiting on its connection.
func testAgentPool(t *testing.T) {
	agents := &silentAgents{}
	defer agents.close()
	prov := fake.New(fake.Config{Agent: agents.dial})
	pool := newAgentPool()
	rows := map[string]store.Sandbox{}
	sb := func(id string) store.Sandbox {
		if row, ok := rows[id]; ok {
			return row
		}
		h, err := prov.Create(t.Context(), provider.Spec{SandboxID: id, Instance: "test", Image: "img", Workspace: "ws-" + id})
		if err != nil {
			t.Fatal(err)
		}
		if err := prov.Start(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		rows[id] = store.Sandbox{ID: id, Provider: prov.Name(), ProviderSandboxID: h.ID, ProviderState: h.State}
		return rows[id]
	}

	// hang starts a call on c and returns its outcome.
	hang := func(id string) <-chan error {
		c, err := pool.get(t.Context(), "rt-1", sb(id), prov)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Health(context.Background()) }()
		return done
	}
	ended := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s: the call succeeded", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the call in flight did not end", what)
		}
	}

	c1, _ := pool.get(t.Context(), "rt-1", sb("sb-1"), prov)
	if again, _ := pool.get(t.Context(), "rt-1", sb("sb-1"), prov); again != c1 {
		t.Fatal("the same sandbox got a second client")
	}
	first := hang("sb-1")
	waitDialed(t, agents, 1)
	// The runtime has another sandbox now: the old one's calls end.
	second := hang("sb-2")
	ended("replaced", first)
	waitDialed(t, agents, 2)
	// Forgetting another sandbox of the runtime changes nothing.
	pool.forget("rt-1", "sb-1")
	synctest.Wait() // a call the forget ended has returned by now
	select {
	case err := <-second:
		t.Fatalf("a call on the current sandbox ended: %v", err)
	default:
	}
	pool.forget("rt-1", "sb-2")
	ended("forgotten", second)

	third := hang("sb-3")
	waitDialed(t, agents, 3)
	pool.close()
	ended("closed", third)
	if _, err := pool.get(t.Context(), "rt-1", sb("sb-3"), prov); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("get after close: %v", err)
	}
}

// waitDialed waits until every goroutine of the bubble is blocked, and
// fails t unless n connections were dialed by then.
func waitDialed(t *testing.T, s *silentAgents, n int) {
	t.Helper()
	synctest.Wait()
	s.mu.Lock()
	got := len(s.peers)
	s.mu.Unlock()
	if got < n {
		t.Fatalf("%d connections dialed, want %d", got, n)
	}
}
