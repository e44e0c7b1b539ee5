package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestReplicaChaos runs three replicas on one PostgreSQL database and one
// data directory behind a round-robin proxy, with real Docker. Clients
// through the proxy create projects and start, exec into, pause, resume
// and reset runtimes, and grant credits while the settler charges the
// running ones; in the middle one replica is SIGKILLed, later the one
// holding the lifecycle lease, and the load goes on against the survivor.
// Once the survivor has taken the leases and reconciled, the database and
// Docker must agree: no runtime or sandbox left starting, a container for
// every live row and a live row for every container, every acknowledged
// write present once, the balance the sum of the journal, and no interval
// of a sandbox charged twice.
func TestReplicaChaos(t *testing.T) {
	figs := replicaChaos(t, 3)
	t.Logf("%d replicas: %s", figs.replicas, figs)
}

// chaosRuntimes is how many runtimes a chaos run makes before its load,
// and chaosMaxRuntimes how many its clients' creates may take it to.
const (
	chaosRuntimes    = 12
	chaosMaxRuntimes = 16
	chaosClients     = 6
	chaosExecs       = 240 // in the throughput phase
	// chaosPhaseOps is how many operations the fleet acknowledges before
	// the first kill, between the kills and after the second.
	chaosPhaseOps = 60
)

// chaosFigures are what a chaos run measured.
type chaosFigures struct {
	replicas int
	// Throughput of starts of idle runtimes and of execs (`true`) into
	// running ones, from chaosClients clients at once through the proxy.
	startsPerSec, execsPerSec float64
	// failover is, by lease, the time from the SIGKILL of its holder to
	// another replica taking it (from the leases table).
	failover map[string]time.Duration
	acked    int // operations the fleet acknowledged under chaos
}

func (f chaosFigures) String() string {
	s := fmt.Sprintf("%.1f starts/s, %.1f execs/s, %d operations acknowledged under load", f.startsPerSec, f.execsPerSec, f.acked)
	for _, name := range slices.Sorted(maps.Keys(f.failover)) {
		s += fmt.Sprintf(", %s lease failover %v", name, f.failover[name].Round(time.Millisecond))
	}
	return s
}

// replicaChaos is TestReplicaChaos on n replicas (with fewer than three,
// nothing is killed), returning its figures.
func replicaChaos(t testing.TB, n int) chaosFigures {
	f := newFleet(t, n)
	c := f.client()
	ids := crashRuntimes(t, c, chaosRuntimes)
	figs := chaosFigures{replicas: n, failover: map[string]time.Duration{}}
	figs.startsPerSec, figs.execsPerSec = throughput(t, f, ids)

	l := newChaosLoad(f, ids)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	l.start(ctx)
	l.waitOps(t, chaosPhaseOps)
	if n >= 3 {
		f.kill(f.leaseless())
		l.waitOps(t, chaosPhaseOps)
		holder := f.holder(leaseLifecycle)
		id := f.replicaID(holder)
		before, err := f.leases(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		killed := f.kill(holder)
		figs.failover = f.failover(id, before, killed)
	}
	l.waitOps(t, chaosPhaseOps)
	cancel()
	l.wait()
	figs.acked = int(l.acked.Load())
	l.report(t)
	t.Logf("the proxy handed the replicas %v connections", f.proxy.spread())

	t0 := time.Now()
	f.converge(c)
	t.Logf("the runtimes, rows and containers agreed %v after the load stopped", time.Since(t0).Round(time.Millisecond))
	checkConsistent(t, 0, c, testenv.DockerClient(t), f.instance)
	checkLedger(t, f.dsn, l)
	if n >= 3 {
		// The dead come back and reach every sandbox, as the survivor
		// does.
		f.restart()
		f.reachEverything()
	}
	f.stop()
	// What the replicas logged of the failures, all of them written now.
	for _, id := range l.requests {
		t.Logf("request %s in the replicas' logs:\n%s", id, strings.Join(f.logLines(id), "\n"))
	}
	return figs
}

// throughput starts every runtime of ids, then runs chaosExecs execs
// spread over them, each from chaosClients clients at once through the
// proxy, and returns starts and execs a second.
func throughput(t testing.TB, f *fleet, ids []string) (starts, execs float64) {
	t.Helper()
	ctx := t.Context()
	clients := make([]*pc.Client, chaosClients)
	for i := range clients {
		clients[i] = f.client()
	}
	run := func(n int, op func(c *pc.Client, i int) error) float64 {
		var (
			next atomic.Int64
			wg   sync.WaitGroup
			errs = make(chan error, len(clients))
		)
		t0 := time.Now()
		for _, c := range clients {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					if err := op(c, i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(t0)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		return float64(n) / elapsed.Seconds()
	}
	starts = run(len(ids), func(c *pc.Client, i int) error {
		_, err := c.StartRuntime(ctx, "acme", "dev", ids[i], pc.StartRuntimeRequest{})
		return err
	})
	execs = run(chaosExecs, func(c *pc.Client, i int) error {
		res, err := c.Exec(ctx, "acme", "dev", ids[i%len(ids)], pc.ExecRequest{Argv: []string{"true"}})
		if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
			err = fmt.Errorf("exec true: exit %+v", res.Exit)
		}
		return err
	})
	return starts, execs
}

// chaosLoad is the clients' work on a fleet, and what the fleet
// acknowledged of it.
type chaosLoad struct {
	f  *fleet
	wg sync.WaitGroup

	acked atomic.Int64 // operations acknowledged

	mu        sync.Mutex
	runtimes  []string           // what the clients act on
	created   []string           // runtimes of acknowledged creates
	postings  map[string]posting // acknowledged grants and adjustments by idempotency key
	sandboxes map[string]string  // sandboxes acknowledged starts and pauses named → the operation
	ops       map[string]int     // acknowledged operations by kind
	refused   map[string]int     // refused ones by kind and why
	failures  []string           // what must never happen
	requests  []string           // the request ids of the failures
}

func newChaosLoad(f *fleet, ids []string) *chaosLoad {
	return &chaosLoad{
		f: f, runtimes: slices.Clone(ids),
		postings: map[string]posting{}, sandboxes: map[string]string{},
		ops: map[string]int{}, refused: map[string]int{},
	}
}

// start runs chaosClients clients, each on a client and a random sequence
// of its own, until ctx ends.
func (l *chaosLoad) start(ctx context.Context) {
	for w := range chaosClients {
		c := l.f.client()
		rng := rand.New(rand.NewPCG(uint64(w), 24))
		l.wg.Go(func() {
			for seq := 0; ctx.Err() == nil; seq++ {
				l.step(ctx, c, rng, fmt.Sprintf("w%d-%d", w, seq))
			}
		})
	}
}

func (l *chaosLoad) wait() { l.wg.Wait() }

// waitOps waits until the fleet has acknowledged n more operations.
func (l *chaosLoad) waitOps(t testing.TB, n int64) {
	t.Helper()
	target := l.acked.Load() + n
	testenv.WaitFor(t, fmt.Sprintf("%d acknowledged operations", target), func() bool {
		return l.acked.Load() >= target
	})
}

// step is one client action: a grant, setting the balance, a create, or
// what suits the status
// of a random runtime as the client last saw it (other clients act on it
// too).
func (l *chaosLoad) step(ctx context.Context, c *pc.Client, rng *rand.Rand, name string) {
	switch rng.IntN(20) {
	case 0, 1:
		micros := int64(1+rng.IntN(100)) * 10_000
		l.post(ctx, posting{"grant", micros}, name, func() (pc.CreditEntry, error) {
			return c.GrantCredits(ctx, "acme", pc.GrantCreditsRequest{Amount: float64(micros) / 1e6, IdempotencyKey: name})
		})
		return
	case 2:
		micros := int64(500+rng.IntN(100)) * 1_000_000
		l.post(ctx, posting{"adjustment", micros}, name, func() (pc.CreditEntry, error) {
			return c.SetCreditBalance(ctx, "acme", pc.SetBalanceRequest{Balance: float64(micros) / 1e6, IdempotencyKey: name})
		})
		return
	case 3, 4:
		l.create(ctx, c, name)
		return
	}
	l.mu.Lock()
	id := l.runtimes[rng.IntN(len(l.runtimes))]
	l.mu.Unlock()
	rt, err := c.GetRuntime(ctx, "acme", "dev", id)
	if err != nil {
		l.refuse(ctx, "get", err)
		return
	}
	r := rng.IntN(10)
	switch {
	case rt.Status == pc.RuntimeIdle:
		l.runtimeOp(ctx, "start", func() (pc.Runtime, error) {
			return c.StartRuntime(ctx, "acme", "dev", id, pc.StartRuntimeRequest{})
		})
	case rt.Status == pc.RuntimeRunning && r < 6:
		l.exec(ctx, c, id, name)
	case rt.Status == pc.RuntimeRunning && r < 8:
		l.runtimeOp(ctx, "pause", func() (pc.Runtime, error) { return c.PauseRuntime(ctx, "acme", "dev", id) })
	case rt.Status == pc.RuntimePaused && r < 7:
		l.runtimeOp(ctx, "resume", func() (pc.Runtime, error) { return c.ResumeRuntime(ctx, "acme", "dev", id) })
	case rt.Status != pc.RuntimeStarting:
		l.runtimeOp(ctx, "reset", func() (pc.Runtime, error) {
			return c.ResetRuntime(ctx, "acme", "dev", id, pc.ResetRequest{})
		})
	}
}

// runtimeOp runs a start, pause, resume or reset and records the sandbox
// an acknowledged start or pause names.
func (l *chaosLoad) runtimeOp(ctx context.Context, kind string, op func() (pc.Runtime, error)) {
	rt, err := op()
	if err != nil {
		l.refuse(ctx, kind, err)
		return
	}
	l.ack(kind, func() {
		if (kind == "start" || kind == "pause") && rt.CurrentSandboxID != "" {
			l.sandboxes[rt.CurrentSandboxID] = kind
		}
	})
}

// exec runs echo in runtime id; an acknowledged exec that exited 0 must
// have printed what it was given.
func (l *chaosLoad) exec(ctx context.Context, c *pc.Client, id, token string) {
	res, err := c.Exec(ctx, "acme", "dev", id, pc.ExecRequest{Argv: []string{"echo", token}})
	if err != nil {
		l.refuse(ctx, "exec", err)
		return
	}
	l.ack("exec", func() {
		if res.Exit != nil && res.Exit.Code == 0 && string(res.Stdout) != token+"\n" {
			l.failures = append(l.failures, fmt.Sprintf("exec echo %s in %s printed %q", token, id, res.Stdout))
		}
	})
}

// create makes a project (and its runtime) while there are fewer than
// chaosMaxRuntimes.
func (l *chaosLoad) create(ctx context.Context, c *pc.Client, name string) {
	l.mu.Lock()
	full := len(l.runtimes) >= chaosMaxRuntimes
	l.mu.Unlock()
	if full {
		return
	}
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{
		Name: "c" + name, Runtime: &pc.RuntimeConfig{MemoryMB: 64, PidsLimit: 32},
	})
	if err != nil {
		l.refuse(ctx, "create", err)
		return
	}
	l.ack("create", func() {
		l.runtimes = append(l.runtimes, p.RuntimeID)
		l.created = append(l.created, p.RuntimeID)
	})
}

// posting is a credit movement a client asked for: a grant of micros,
// or an adjustment that sets the balance to micros.
type posting struct {
	kind   string
	micros int64
}

// post makes posting p under idempotency key key with do, retrying with
// the same key through the proxy (so on another replica) while the answer
// is lost or a server error.
func (l *chaosLoad) post(ctx context.Context, p posting, key string, do func() (pc.CreditEntry, error)) {
	var err error
	for range 5 {
		var e pc.CreditEntry
		if e, err = do(); err == nil {
			l.ack(p.kind, func() {
				l.postings[key] = p
				if e.IdempotencyKey != key {
					l.failures = append(l.failures, fmt.Sprintf("%s %s answered entry %+v", p.kind, key, e))
				}
			})
			return
		}
		if apiErr := (*pc.Error)(nil); errors.As(err, &apiErr) && apiErr.StatusCode < 500 {
			break
		}
	}
	l.refuse(ctx, p.kind, err)
}

// ack records an acknowledged operation of kind, and what record adds,
// under the lock.
func (l *chaosLoad) ack(kind string, record func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops[kind]++
	record()
	l.acked.Add(1)
}

// refuse records a refused operation: a conflict or 503 is the fleet
// serializing runtimes or reconciling, a lost answer a replica dying,
// while a 500 is a failure. What the end of the load cut short is not
// recorded.
func (l *chaosLoad) refuse(ctx context.Context, kind string, err error) {
	if ctx.Err() != nil {
		return
	}
	why := "no answer"
	apiErr := (*pc.Error)(nil)
	if errors.As(err, &apiErr) {
		why = fmt.Sprintf("%d %s", apiErr.StatusCode, apiErr.Code)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused[kind+": "+why]++
	if apiErr != nil && apiErr.StatusCode == 500 {
		l.failures = append(l.failures, fmt.Sprintf("%s: %v (request %s)", kind, err, apiErr.RequestID))
		l.requests = append(l.requests, apiErr.RequestID)
	}
}

// report logs what the load did and fails t with what must never happen.
func (l *chaosLoad) report(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("acknowledged: %v; refused: %v", l.ops, l.refused)
	for _, f := range l.failures {
		t.Errorf("under load: %s", f)
	}
}
