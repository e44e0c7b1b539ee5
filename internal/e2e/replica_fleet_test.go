package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// fleet is replicas of one installation: `paddock serve` processes on one
// data directory, one run directory and one PostgreSQL database, each on
// ports of its own, behind a round-robin proxy the test runs.
type fleet struct {
	t        testing.TB
	bin      string
	shim     string
	data     string
	runDir   string
	instance string
	env      []string
	dsn      string
	proxy    *rrProxy
	// replicas by index; an entry stays after its replica is killed,
	// until it is restarted.
	replicas []*server
	dead     []bool
	exited   []*server // killed replicas since restarted, for their logs
}

// fleetKey is the bootstrap admin key of a fleet's installation.
const fleetKey = "pdk_0123456789abcdef0123456789abcdef0123456789abf1ee"

// fleetLeaseTTL is the replicas' lease TTL: short, so that a dead
// holder's loops move within seconds.
const fleetLeaseTTL = 3 * time.Second

// fleets counts the fleets started.
var fleets atomic.Int64

// newFleet starts n replicas on a new PostgreSQL database, all at once,
// and the proxy in front of them. Settlement runs every second with a two-second prepaid slice,
// so that a short run charges, refunds and settles.
func newFleet(t testing.TB, n int) *fleet {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	f := &fleet{
		t:      t,
		bin:    testenv.Binary(t, "paddock"),
		shim:   testenv.Binary(t, "paddock-shim"),
		data:   t.TempDir(),
		runDir: filepath.Join(testenv.ShortTempDir(t), "r"),
		// An installation of its own, whose containers the next fleet
		// of the same test (a benchmark's next iteration) leaves alone.
		instance: fmt.Sprintf("%s-f%d", testenv.Instance(t), fleets.Add(1)),
		dsn:      testenv.Postgres(t),
	}
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, f.instance) })
	f.env = []string{
		"PADDOCK_STORE=" + f.dsn,
		"PADDOCK_LEASE_TTL=" + fleetLeaseTTL.String(),
		"PADDOCK_SETTLE_INTERVAL=1s",
		"PADDOCK_CREDIT_FIRST_SLICE=2s",
		// The load is one key from one address (the proxy's). The rate
		// limits stay on, shared by the replicas, so each request draws
		// from the shared buckets, but far above the load: the figures
		// are the replicas', not the limit's.
		"PADDOCK_RATE_PER_KEY=1e6", "PADDOCK_BURST_PER_KEY=1000000",
		"PADDOCK_RATE_PER_CLIENT=1e6", "PADDOCK_BURST_PER_CLIENT=1000000",
	}
	f.proxy = startProxy(t)
	// All at once on the fresh installation, as an operator's fleet would.
	f.replicas, f.dead = make([]*server, n), make([]bool, n)
	f.startAll(func(int) bool { return true })
	return f
}

// startAll starts, all at once, the replicas which picks, waits until
// each is ready, and puts every live replica behind the proxy.
func (f *fleet) startAll(which func(i int) bool) {
	f.t.Helper()
	started := map[int]*starting{}
	for i := range f.replicas {
		if which(i) {
			started[i] = begin(f.t, serveCommand(f.t, f.bin, f.shim, f.data, f.runDir, f.instance, fleetKey, f.env...))
		}
	}
	for i, st := range started {
		if f.replicas[i] != nil {
			f.exited = append(f.exited, f.replicas[i])
		}
		f.replicas[i], f.dead[i] = st.ready(f.t, 2*time.Minute, nil), false
	}
	f.proxy.setBackends(f.live())
}

// restart starts the killed replicas again, on the same data directory,
// run directory and database: they rejoin the fleet.
func (f *fleet) restart() {
	f.t.Helper()
	f.startAll(func(i int) bool { return f.dead[i] })
}

// reachEverything checks that every replica reaches every running
// runtime's sandbox, whichever started it: an exec through each.
func (f *fleet) reachEverything() {
	f.t.Helper()
	ctx := f.t.Context()
	reached := 0
	defer func() {
		f.t.Logf("%d execs through the %d replicas, each in a running runtime", reached, len(f.replicas))
	}()
	for i, s := range f.replicas {
		c := sdkFor(f.t, s, fleetKey)
		list, err := c.ListRuntimes(ctx, "acme", "dev", pc.ListOptions{Limit: 100})
		if err != nil {
			f.t.Fatalf("list runtimes through replica %d: %v", i, err)
		}
		for _, rt := range list.Items {
			if rt.Status != pc.RuntimeRunning {
				continue
			}
			token := fmt.Sprintf("r%d-%s", i, rt.ID)
			res, err := c.Exec(ctx, "acme", "dev", rt.ID, pc.ExecRequest{Argv: []string{"echo", token}})
			if err != nil || string(res.Stdout) != token+"\n" {
				f.t.Errorf("exec in %s through replica %d: %q, %v", rt.ID, i, res.Stdout, err)
				continue
			}
			reached++
		}
	}
}

// live returns the addresses of the replicas still running.
func (f *fleet) live() []string {
	var addrs []string
	for i, s := range f.replicas {
		if !f.dead[i] {
			addrs = append(addrs, urlHost(s.url))
		}
	}
	return addrs
}

// urlHost is the host:port of a server's URL.
func urlHost(u string) string {
	p, _ := url.Parse(u)
	return p.Host
}

// kill SIGKILLs replica i and returns when it is gone. The proxy keeps
// its address: it finds it refusing and skips it, as a load balancer
// whose health check has not yet noticed would.
func (f *fleet) kill(i int) time.Time {
	f.t.Helper()
	at := time.Now()
	f.replicas[i].kill(f.t)
	f.dead[i] = true
	return at
}

// stop stops the live replicas (SIGTERM), waits for each to exit
// cleanly, and removes the installation's containers.
func (f *fleet) stop() {
	f.t.Helper()
	for i, s := range f.replicas {
		if !f.dead[i] {
			s.stop(f.t)
			f.dead[i] = true
		}
	}
	if err := testenv.Sweep(provider.LabelInstance, f.instance); err != nil {
		f.t.Error(err)
	}
}

// logLines returns the lines of the replicas' logs (those of the
// processes killed and restarted too) that mention s.
func (f *fleet) logLines(s string) []string {
	var out []string
	for i, r := range append(slices.Clone(f.replicas), f.exited...) {
		for line := range strings.Lines(r.logs.String()) {
			if strings.Contains(line, s) {
				out = append(out, fmt.Sprintf("process %d: %s", i, strings.TrimSpace(line)))
			}
		}
	}
	return out
}

// client returns a client of the installation through the proxy, on
// connections of its own: each request opens one, so that the proxy
// spreads requests, not connections, over the replicas.
func (f *fleet) client() *pc.Client {
	f.t.Helper()
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	c, err := pc.New("http://"+f.proxy.addr(), fleetKey, pc.WithHTTPClient(hc))
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// readiness is replica i's /readyz.
func (f *fleet) readiness(i int) (pc.Readiness, error) {
	var ready pc.Readiness
	resp, err := http.Get(f.replicas[i].url + "/readyz")
	if err != nil {
		return ready, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&ready)
	return ready, err
}

// holds reports whether replica i says it holds lease name.
func (f *fleet) holds(i int, name string) bool {
	ready, err := f.readiness(i)
	if err != nil {
		return false
	}
	for _, l := range ready.Leases {
		if l.Name == name {
			return l.Held
		}
	}
	return false
}

// holder returns the live replica that holds lease name, waiting until
// one does.
func (f *fleet) holder(name string) int {
	f.t.Helper()
	found := -1
	testenv.WaitFor(f.t, "a replica to hold the "+name+" lease", func() bool {
		for i := range f.replicas {
			if !f.dead[i] && f.holds(i, name) {
				found = i
				return true
			}
		}
		return false
	})
	return found
}

// rrProxy is a TCP proxy on loopback that hands each connection to the
// next backend in turn, skipping those that refuse it.
type rrProxy struct {
	ln net.Listener

	mu       sync.Mutex
	backends []string
	next     int
	served   map[string]int // connections handed to each backend
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// startProxy listens on a loopback port; it closes when t ends.
func startProxy(t testing.TB) *rrProxy {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &rrProxy{ln: ln, conns: map[net.Conn]struct{}{}, served: map[string]int{}}
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

func (p *rrProxy) addr() string { return p.ln.Addr().String() }

// setBackends replaces the backends.
func (p *rrProxy) setBackends(addrs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = addrs
}

func (p *rrProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Go(func() { p.handle(c) })
	}
}

// track records an open connection, so that close can end it; false once
// the proxy is closed.
func (p *rrProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *rrProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// handle joins the client's connection to a backend's until either side
// ends.
func (p *rrProxy) handle(c net.Conn) {
	defer p.untrack(c)
	defer c.Close()
	b, err := p.dial()
	if err != nil {
		return // the client sees its connection closed
	}
	if !p.track(b) {
		b.Close()
		return
	}
	defer p.untrack(b)
	defer b.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(b, c)
	go pipe(c, b)
	<-done
	<-done
}

// dial connects to the next backend that accepts, trying each once.
func (p *rrProxy) dial() (net.Conn, error) {
	p.mu.Lock()
	backends, start := p.backends, p.next
	p.next++
	p.mu.Unlock()
	var errs []error
	for k := range backends {
		addr := backends[(start+k)%len(backends)]
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			p.mu.Lock()
			p.served[addr]++
			p.mu.Unlock()
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no backend accepts: %w", errors.Join(errs...))
}

// spread returns how many connections each backend was handed, in the
// order of the backends.
func (p *rrProxy) spread() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int, len(p.backends))
	for i, b := range p.backends {
		out[i] = p.served[b]
	}
	return out
}

// close stops accepting, ends every open connection and waits for the
// proxy's goroutines.
func (p *rrProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// The leases of the server's background loops (internal/server).
const (
	leaseLifecycle = "lifecycle"
	leaseSettle    = "settle"
)

// replicaID is the id replica i gives in its /readyz.
func (f *fleet) replicaID(i int) string {
	f.t.Helper()
	ready, err := f.readiness(i)
	if err != nil || ready.Replica == "" {
		f.t.Fatalf("replica %d's id: %v (%+v)", i, err, ready)
	}
	return ready.Replica
}

// leaseless returns a live replica that holds no lease, or else one that
// does not hold the lifecycle lease.
func (f *fleet) leaseless() int {
	f.t.Helper()
	other := -1
	for i := range f.replicas {
		if f.dead[i] {
			continue
		}
		ready, err := f.readiness(i)
		if err != nil {
			f.t.Fatalf("replica %d's /readyz: %v", i, err)
		}
		held := map[string]bool{}
		for _, l := range ready.Leases {
			held[l.Name] = l.Held
		}
		switch {
		case !held[leaseLifecycle] && !held[leaseSettle]:
			return i
		case !held[leaseLifecycle]:
			other = i
		}
	}
	if other < 0 {
		f.t.Fatal("every live replica holds the lifecycle lease")
	}
	return other
}

// leaseRow is a row of the leases table.
type leaseRow struct {
	holder   string
	token    int64
	acquired time.Time
}

// leases reads the leases table.
func (f *fleet) leases(ctx context.Context) (map[string]leaseRow, error) {
	conn, err := pgx.Connect(ctx, f.dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT name, holder, token, acquired_at FROM leases")
	if err != nil {
		return nil, err
	}
	out := map[string]leaseRow{}
	var name string
	var l leaseRow
	_, err = pgx.ForEachRow(rows, []any{&name, &l.holder, &l.token, &l.acquired}, func() error {
		out[name] = l
		return nil
	})
	return out, err
}

// failover waits until each lease that replica id held before it was
// killed at killed has another holder, with a larger fencing token, and
// returns by lease how long after the kill that holder took it.
func (f *fleet) failover(id string, before map[string]leaseRow, killed time.Time) map[string]time.Duration {
	f.t.Helper()
	took := map[string]time.Duration{}
	testenv.Eventually(f.t, func() error {
		now, err := f.leases(f.t.Context())
		if err != nil {
			return err
		}
		for name, was := range before {
			l := now[name]
			// A replica's presence is its own: no other takes it over; it
			// lapses (TestPresence, TestTasksStayWithTheirReplica).
			if was.holder != id || strings.HasPrefix(name, lease.PresencePrefix) {
				continue
			}
			if l.holder == "" || l.holder == id {
				return fmt.Errorf("lease %s still held by the killed replica %s (%+v)", name, id, l)
			}
			if l.token <= was.token {
				f.t.Errorf("lease %s changed holder (%s to %s) without a larger token (%d, then %d)", name, id, l.holder, was.token, l.token)
			}
			took[name] = l.acquired.Sub(killed)
		}
		return nil
	})
	return took
}

// converge waits until the live replicas' start-up reconciliation is done
// and the runtimes, sandbox rows and containers agree: the lifecycle
// lease's holder has reconciled what the killed replicas left.
func (f *fleet) converge(c *pc.Client) {
	f.t.Helper()
	for i, s := range f.replicas {
		if !f.dead[i] {
			s.waitReconciled(f.t)
		}
	}
	cli := testenv.DockerClient(f.t)
	testenv.Eventually(f.t, func() error {
		_, problems, err := consistency(f.t.Context(), c, cli, f.instance)
		if err == nil && len(problems) > 0 {
			err = errors.New(strings.Join(problems, "; "))
		}
		return err
	})
}
