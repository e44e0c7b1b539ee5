package docker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"
	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// networkProvider returns a provider of e with egress networks of its own,
// removed (with their firewall rules) when the test ends.
func (e *env) networkProvider(t *testing.T, proxyPort int) (*docker.Provider, *docker.Networks) {
	t.Helper()
	suffix := uuid.NewString()[:8]
	nets := &docker.Networks{Proxy: "pdk-test-p-" + suffix, Open: "pdk-test-o-" + suffix, ProxyPort: proxyPort}
	p := e.providerOn(t, e.instance, nets)
	t.Cleanup(func() {
		sweep(e.instance) // containers first: a network in use cannot go
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.RemoveNetworks(ctx); err != nil {
			t.Errorf("RemoveNetworks: %v", err)
		}
	})
	return p, nets
}

// providerOn returns a provider of e, labelled instance, whose egress
// networks are nets.
func (e *env) providerOn(t *testing.T, instance string, nets *docker.Networks) *docker.Provider {
	t.Helper()
	p, err := docker.New(docker.Config{
		Name: e.flavour.name, Runtime: e.flavour.runtime,
		Instance: instance, ShimPath: e.shim, RunDir: e.runDir, DiskDir: e.diskDir,
		StartTimeout: 30 * time.Second, Networks: nets,
	}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestFirewallKeepsEveryProxyPort: a second server of the installation on
// the same proxy network, with another proxy port, adds its ACCEPT without
// putting a DROP above the first one's: sandboxes reach both proxies, and
// still nothing else on the host.
func TestFirewallKeepsEveryProxyPort(t *testing.T) {
	e := newEnv(t)
	first, nets := e.networkProvider(t, freePort(t))
	firstAddr, err := first.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hostServer(t, firstAddr.String(), "first")
	allowProxy(t, first)
	h := e.sandboxIn(t, first, provider.NetworkProxy)
	if !e.reachesSoon(t, h, firstAddr.String()) {
		t.Fatal("a proxy sandbox cannot reach its proxy")
	}

	second := e.providerOn(t, e.instance, &docker.Networks{Proxy: nets.Proxy, Open: nets.Open, ProxyPort: freePort(t)})
	secondAddr, err := second.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hostServer(t, secondAddr.String(), "second")
	allowProxy(t, second)
	onBridge := hostServer(t, firstAddr.Addr().String()+":0", "bridge-address")
	if !e.reachesSoon(t, h, firstAddr.String()) {
		t.Error("the second server's rules cut the first server's sandboxes off from their proxy")
	}
	if !e.reachesSoon(t, h, secondAddr.String()) {
		t.Error("a proxy sandbox cannot reach the second server's proxy")
	}
	if e.reaches(t, first, h, onBridge) {
		t.Error("a proxy sandbox reached the host beside the proxies")
	}
	// Set up again, in either order, the rules stay as they are.
	for _, p := range []*docker.Provider{first, second} {
		if _, err := p.SetupNetworks(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if !e.reachesSoon(t, h, firstAddr.String()) || !e.reachesSoon(t, h, secondAddr.String()) {
		t.Error("setting the networks up again cut a proxy off")
	}
}

// TestProxyAcceptFollowsTheListener: a proxy port that another program
// holds on all addresses never gets an ACCEPT: the ACCEPT comes only with
// AllowProxy, which the server calls once its proxy listens. An ACCEPT
// that a server left behind (it crashed, or ran with another proxy_port)
// goes at the next setup, since nothing listens on its port at the
// gateway; revoke takes a live one back.
func TestProxyAcceptFollowsTheListener(t *testing.T) {
	e := newEnv(t)
	busy := freePort(t)
	crashed, nets := e.networkProvider(t, busy)
	gw, err := crashed.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	bridge, _ := bridgeOf(t, e, nets.Proxy)
	chain := docker.FirewallChain(bridge)
	if rules := acceptsIn(t, chain); len(rules) != 0 {
		t.Fatalf("SetupNetworks added ACCEPTs before any proxy listens: %v", rules)
	}
	if _, err := crashed.AllowProxy(t.Context()); err != nil { // never revoked: the server crashed
		t.Fatal(err)
	}
	hostServer(t, fmt.Sprintf("0.0.0.0:%d", busy), "other-program")

	moved := e.providerOn(t, e.instance, &docker.Networks{Proxy: nets.Proxy, Open: nets.Open, ProxyPort: freePort(t)})
	addr, err := moved.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	proxy := listenOn(t, addr.String(), "proxy")
	revoke, err := moved.AllowProxy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h := e.sandboxIn(t, moved, provider.NetworkProxy)
	if !e.reachesSoon(t, h, addr.String()) {
		t.Fatal("a proxy sandbox cannot reach its proxy")
	}
	if e.reaches(t, moved, h, netip.AddrPortFrom(gw.Addr(), uint16(busy)).String()) {
		t.Error("a proxy sandbox reached another program on an earlier proxy port")
	}
	if rules := acceptsIn(t, chain); len(rules) != 1 || !strings.Contains(rules[0], fmt.Sprintf("--dport %d ", addr.Port())) {
		t.Errorf("ACCEPTs in %s = %v, want the live proxy's only", chain, rules)
	}
	proxy.Close()
	revoke()
	if rules := acceptsIn(t, chain); len(rules) != 0 {
		t.Errorf("ACCEPTs in %s after revoke = %v, want none", chain, rules)
	}
	if e.reaches(t, moved, h, addr.String()) {
		t.Error("a proxy sandbox reached the proxy port after revoke")
	}
}

// TestReplicasShareTheProxyPort: two servers of one installation on one
// host (replicas sharing the run directory) listen on one proxy port with
// SO_REUSEPORT. When one stops, its revoke keeps the ACCEPT, since the
// other still listens there, and the sandboxes still reach the proxy;
// when the last stops, the ACCEPT goes.
func TestReplicasShareTheProxyPort(t *testing.T) {
	e := newEnv(t)
	port := freePort(t)
	a, nets := e.networkProvider(t, port)
	b := e.providerOn(t, e.instance, &docker.Networks{Proxy: nets.Proxy, Open: nets.Open, ProxyPort: port})
	addr, err := a.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if bAddr, err := b.SetupNetworks(t.Context()); err != nil || bAddr != addr {
		t.Fatalf("the second replica's proxy address = %v, %v; want %v", bAddr, err, addr)
	}
	var revokes []func()
	for _, r := range []struct {
		p    *docker.Provider
		name string
	}{{a, "a"}, {b, "b"}} {
		l, err := egress.ListenShared(t.Context(), addr.String())
		if err != nil {
			t.Fatalf("replica %s on the proxy port: %v", r.name, err)
		}
		serveOn(t, l, "proxy")
		revoke, err := r.p.AllowProxy(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		revokes = append(revokes, func() { l.Close(); revoke() })
	}
	bridge, _ := bridgeOf(t, e, nets.Proxy)
	chain := docker.FirewallChain(bridge)
	h := e.sandboxIn(t, a, provider.NetworkProxy)
	if !e.reachesSoon(t, h, addr.String()) {
		t.Fatal("a proxy sandbox cannot reach the replicas' proxy")
	}
	revokes[0]() // a stops
	if rules := acceptsIn(t, chain); len(rules) != 1 {
		t.Errorf("ACCEPTs in %s after one replica stopped = %v, want the one b still needs", chain, rules)
	}
	for range 5 { // every connection now lands on b's listener
		if !e.reaches(t, b, h, addr.String()) {
			t.Fatal("a proxy sandbox lost the proxy when one of two replicas stopped")
		}
	}
	revokes[1]() // b stops
	if rules := acceptsIn(t, chain); len(rules) != 0 {
		t.Errorf("ACCEPTs in %s after both replicas stopped = %v, want none", chain, rules)
	}
}

// acceptsIn lists the ACCEPT rules of chain.
func acceptsIn(t *testing.T, chain string) []string {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-S", chain).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, " -j ACCEPT") {
			rules = append(rules, line)
		}
	}
	return rules
}

// inputRules lists the rules of INPUT.
func inputRules(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-S", "INPUT").Output()
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "-A INPUT ") {
			rules = append(rules, line)
		}
	}
	return rules
}

// ipt runs iptables, and its inverse (the same rule with -D) when the test
// ends.
func ipt(t *testing.T, op string, rule ...string) {
	t.Helper()
	if out, err := exec.Command("iptables", append([]string{"-w", op}, rule...)...).CombinedOutput(); err != nil {
		t.Fatalf("iptables %s %v: %v\n%s", op, rule, err, out)
	}
	if op == "-I" && len(rule) > 1 && rule[1] == "1" {
		rule = append([]string{rule[0]}, rule[2:]...)
	}
	t.Cleanup(func() {
		for exec.Command("iptables", append([]string{"-w", "-D"}, rule...)...).Run() == nil {
		}
	})
}

// TestFirewallReplacesFlatRules: the flat INPUT rules of an earlier
// release (ACCEPT of the proxy port, DROP) give way to the jump, which
// sits above every rule but paddock's other jumps; an operator's own rule
// naming the bridge stays. A rule put above the jump later is passed
// again at the next setup.
func TestFirewallReplacesFlatRules(t *testing.T) {
	e := newEnv(t)
	p, nets := e.networkProvider(t, freePort(t))
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	bridge, gw := bridgeOf(t, e, nets.Proxy)
	jump := "-A INPUT -i " + bridge + " -j " + docker.FirewallChain(bridge)
	docker.RemoveFirewall(bridge)
	oldDrop := []string{"INPUT", "-i", bridge, "-j", "DROP"}
	oldAccept := []string{"INPUT", "-d", gw + "/32", "-i", bridge, "-p", "tcp", "-m", "tcp", "--dport", strconv.Itoa(nets.ProxyPort), "-j", "ACCEPT"}
	ipt(t, "-I", oldDrop...)
	ipt(t, "-I", oldAccept...)
	operators := []string{"INPUT", "1", "-i", bridge, "-p", "udp", "-m", "udp", "--dport", "9", "-j", "ACCEPT"}
	ipt(t, "-I", operators...)

	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkJumpOnTop := func(when string) {
		t.Helper()
		rules := inputRules(t)
		for _, r := range rules {
			if r == jump {
				break
			}
			if !strings.Contains(r, " -j PADDOCK-pdk") {
				t.Errorf("%s: INPUT holds %q above the jump %q: %v", when, r, jump, rules)
				return
			}
		}
		if !slices.Contains(rules, jump) {
			t.Errorf("%s: no jump %q in INPUT: %v", when, jump, rules)
		}
		for _, r := range rules {
			if r == "-A "+strings.Join(oldDrop, " ") || r == "-A "+strings.Join(oldAccept, " ") {
				t.Errorf("%s: the earlier release's rule %q is still in INPUT", when, r)
			}
		}
		if want := "-A INPUT -i " + bridge + " -p udp -m udp --dport 9 -j ACCEPT"; !slices.Contains(rules, want) {
			t.Errorf("%s: the operator's rule %q went", when, want)
		}
	}
	checkJumpOnTop("after the upgrade")

	ipt(t, "-I", "INPUT", "1", "-i", bridge, "-p", "udp", "-m", "udp", "--dport", "7", "-j", "ACCEPT")
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkJumpOnTop("after a rule went above the jump")
	if n := strings.Count(strings.Join(inputRules(t), "\n")+"\n", jump+"\n"); n != 1 {
		t.Errorf("INPUT holds the jump %d times, want once", n)
	}
}

// TestNetworksOfAnotherInstallation: a network carrying another
// installation's label is refused, with a message that names the settings
// to change; the networks of earlier releases are taken over only by the
// installation whose label they carry.
func TestNetworksOfAnotherInstallation(t *testing.T) {
	e := newEnv(t)
	mine, nets := e.networkProvider(t, freePort(t))
	addr, err := mine.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other := e.instance + "-other"
	theirs := e.providerOn(t, other, &docker.Networks{Proxy: nets.Proxy, Open: nets.Open, ProxyPort: nets.ProxyPort})
	_, err = theirs.SetupNetworks(t.Context())
	if e, ok := errdefs.Public(err); !ok || e.Code != docker.CodeNetworkForeign ||
		!strings.Contains(e.Message, "PADDOCK_EGRESS_PROXY_NETWORK") || !strings.Contains(e.Message, other) {
		t.Fatalf("SetupNetworks on another installation's network = %v, want %s naming the settings", err, docker.CodeNetworkForeign)
	}
	if got := theirs.Capabilities().Networks; !slices.Equal(got, []provider.NetworkPolicy{provider.NetworkNone}) {
		t.Fatalf("networks offered after the refusal = %v, want none only", got)
	}

	// The same names as an earlier release's: this installation takes
	// them over, the other makes its own.
	suffix := uuid.NewString()[:8]
	earlier := &docker.Networks{Proxy: nets.Proxy, Open: nets.Open}
	again := e.providerOn(t, e.instance, &docker.Networks{Proxy: "pdk-test-p-" + suffix, Open: "pdk-test-o-" + suffix, ProxyPort: nets.ProxyPort, Earlier: earlier})
	if got, err := again.SetupNetworks(t.Context()); err != nil || got != addr {
		t.Fatalf("SetupNetworks with the earlier networks its own = %v, %v; want %v", got, err, addr)
	}
	theirs = e.providerOn(t, other, &docker.Networks{Proxy: "pdk-test-p-" + suffix + "x", Open: "pdk-test-o-" + suffix + "x", ProxyPort: nets.ProxyPort, Earlier: earlier})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = theirs.RemoveNetworks(ctx)
	})
	got, err := theirs.SetupNetworks(t.Context())
	if err != nil || got.Addr() == addr.Addr() {
		t.Fatalf("SetupNetworks of another installation with earlier networks not its own = %v, %v; want networks of its own", got, err)
	}
	if _, err := e.cli.NetworkInspect(t.Context(), "pdk-test-p-"+suffix+"x", network.InspectOptions{}); err != nil {
		t.Fatalf("the other installation's own proxy network: %v", err)
	}
}

// hostServer answers "ok-NAME" to every connection on addr.
func hostServer(t *testing.T, addr, name string) string {
	t.Helper()
	return listenOn(t, addr, name).Addr().String()
}

// listenOn is hostServer's listener, for a test that closes it itself.
func listenOn(t *testing.T, addr, name string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, l, name)
	return l
}

// serveOn answers every connection to l with ok-<name>, until l or the
// test ends.
func serveOn(t *testing.T, l net.Listener, name string) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "ok-%s\n", name)
			c.Close()
		}
	}()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sandboxIn starts a sandbox of p in network mode.
func (e *env) sandboxIn(t *testing.T, p *docker.Provider, mode provider.NetworkPolicy) provider.Handle {
	t.Helper()
	spec := e.spec()
	spec.Network = mode
	h, err := p.Create(t.Context(), spec)
	if err != nil {
		t.Fatalf("Create %s: %v", mode, err)
	}
	if err := p.Start(t.Context(), h); err != nil {
		t.Fatalf("Start %s: %v", mode, err)
	}
	return h
}

// reachesSoon reports whether the sandbox gets an answer from addr within
// a generous bound, trying again meanwhile: for what must be reachable.
func (e *env) reachesSoon(t *testing.T, h provider.Handle, addr string) bool {
	t.Helper()
	return testenv.Poll(time.Minute, func() error {
		if !e.reaches(t, nil, h, addr) {
			return errors.New("no answer")
		}
		return nil
	}) == nil
}

// allowProxy lets p's proxy sandboxes reach its proxy until the test ends.
func allowProxy(t *testing.T, p *docker.Provider) {
	t.Helper()
	revoke, err := p.AllowProxy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(revoke)
}

// reaches reports whether the sandbox gets an answer from addr.
func (e *env) reaches(t *testing.T, p *docker.Provider, h provider.Handle, addr string) bool {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	out, _ := e.execIn(t, h.ID, "sh", "-c", fmt.Sprintf("nc -w 2 %s %s </dev/null 2>&1", host, port))
	return strings.Contains(out, "ok-")
}

func bridgeOf(t *testing.T, e *env, name string) (bridge, gateway string) {
	t.Helper()
	insp, err := e.cli.NetworkInspect(t.Context(), name, network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return insp.Options["com.docker.network.bridge.name"], insp.IPAM.Config[0].Gateway
}

// TestNetworksKeepTheHostAway: from none and proxy sandboxes nothing on
// the host but the proxy answers, and from open ones nothing on the host
// at all; without the INPUT-drop rules the same probes reach the host,
// which shows the probes would see a hole. Under gVisor too, whose own
// network stack sends its packets through the same bridges. (The two run
// at once: the probes spend their time waiting.)
func TestNetworksKeepTheHostAway(t *testing.T) { eachFlavour(t, true, testKeepTheHostAway) }

func testKeepTheHostAway(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	proxyPort := freePort(t)
	p, nets := e.networkProvider(t, proxyPort)
	if got := p.Capabilities().Networks; !slices.Equal(got, []provider.NetworkPolicy{provider.NetworkNone}) {
		t.Fatalf("networks offered before SetupNetworks = %v, want none only", got)
	}
	proxyAddr, err := p.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Capabilities{Isolation: "container", Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}}
	if fl.runtime != "" {
		want.Isolation = "gvisor"
	}
	if got := p.Capabilities(); got.Isolation != want.Isolation || !slices.Equal(got.Networks, want.Networks) {
		t.Fatalf("capabilities after SetupNetworks: isolation %q, networks %v; want %q, %v", got.Isolation, got.Networks, want.Isolation, want.Networks)
	}
	if again, err := p.SetupNetworks(t.Context()); err != nil || again != proxyAddr {
		t.Fatalf("SetupNetworks again: %v, %v; want the same address %v", again, err, proxyAddr)
	}
	proxyBridge, gw := bridgeOf(t, e, nets.Proxy)
	openBridge, openGW := bridgeOf(t, e, nets.Open)
	if proxyAddr.Addr().String() != gw || int(proxyAddr.Port()) != proxyPort {
		t.Fatalf("proxy address %v, want %s:%d", proxyAddr, gw, proxyPort)
	}
	_, docker0 := bridgeOf(t, e, "bridge")

	hostServer(t, proxyAddr.String(), "proxy")
	allowProxy(t, p)
	onBridge := hostServer(t, gw+":0", "bridge-address")
	onAll := hostServer(t, "0.0.0.0:0", "all-addresses")
	_, allPort, _ := net.SplitHostPort(onAll)
	hostTargets := []string{onBridge, net.JoinHostPort(gw, allPort), net.JoinHostPort(openGW, allPort), net.JoinHostPort(docker0, allPort)}

	none, proxied, open := e.sandboxIn(t, p, provider.NetworkNone), e.sandboxIn(t, p, provider.NetworkProxy), e.sandboxIn(t, p, provider.NetworkOpen)

	if !e.reachesSoon(t, proxied, proxyAddr.String()) {
		t.Fatal("a proxy sandbox cannot reach the egress proxy")
	}
	for _, sb := range []struct {
		name string
		h    provider.Handle
	}{{"none", none}, {"proxy", proxied}, {"open", open}} {
		for _, target := range hostTargets {
			if e.reaches(t, p, sb.h, target) {
				t.Errorf("a %s sandbox reached the host at %s", sb.name, target)
			}
		}
	}
	if e.reaches(t, p, none, proxyAddr.String()) || e.reaches(t, p, open, proxyAddr.String()) {
		t.Error("a none or open sandbox reached the egress proxy")
	}
	if err := exec.Command("iptables", "-w", "-t", "raw", "-C", "PREROUTING", "-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP").Run(); err != nil {
		t.Errorf("no rule keeps open sandboxes from the metadata range: %v", err)
	}

	// The control: without the drop the host is reachable, so the probes
	// above do see a hole when there is one.
	for _, bridge := range []string{proxyBridge, openBridge} {
		for exec.Command("iptables", "-w", "-D", docker.FirewallChain(bridge), "-j", "DROP").Run() == nil {
		}
	}
	if !e.reachesSoon(t, proxied, onBridge) {
		t.Error("control: without the INPUT drop a proxy sandbox still could not reach the host; the probe proves nothing")
	}
	if !e.reachesSoon(t, open, net.JoinHostPort(openGW, allPort)) {
		t.Error("control: without the INPUT drop an open sandbox still could not reach the host; the probe proves nothing")
	}
	// An earlier release kept the metadata rule in DOCKER-USER: a start
	// takes it away.
	earlier := []string{"DOCKER-USER", "-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP"}
	ipt(t, "-I", earlier...)
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if exec.Command("iptables", append([]string{"-w", "-C"}, earlier...)...).Run() == nil {
		t.Error("the earlier release's metadata rule in DOCKER-USER is still there after a start")
	}
	if e.reaches(t, p, proxied, onBridge) || !e.reachesSoon(t, proxied, proxyAddr.String()) {
		t.Error("SetupNetworks did not restore the rules in order")
	}
}

// nameservers returns the nameserver addresses of a resolv.conf.
func nameservers(resolvConf string) []string {
	var out []string
	for _, line := range strings.Split(resolvConf, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, f[1])
		}
	}
	return out
}

// wantNameservers is what an open sandbox of flavour fl must be told:
// Docker's embedded server on runc; under gVisor, which cannot reach it,
// the host's IPv4 resolvers but loopback ones (or Docker's fallback).
func wantNameservers(t *testing.T, fl flavour) []string {
	t.Helper()
	if fl.runtime == "" {
		return []string{"127.0.0.11"}
	}
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range nameservers(string(b)) {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() && !a.IsLoopback() {
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		want = []string{"8.8.8.8", "8.8.4.4"}
	}
	return want
}

// outside is a network namespace the test made, beyond the host: reached
// through a veth pair, at its own address and at a link-local one (a
// stand-in for the metadata address, which the test must not route).
type outside struct {
	addr, linkLocal string
}

func makeOutside(t *testing.T) outside {
	t.Helper()
	id := uuid.NewString()[:6]
	ns, host, peer := "pdkt-"+id, "pdkv"+id+"h", "pdkv"+id+"n"
	k := 1 + int(uuid.New()[0])%250
	o := outside{addr: fmt.Sprintf("198.18.%d.2", k), linkLocal: fmt.Sprintf("169.254.77.%d", k)}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "route", "del", o.linkLocal+"/32").Run()
		_ = exec.Command("ip", "netns", "del", ns).Run() // and the veth pair with it
	})
	ip("link", "add", host, "type", "veth", "peer", "name", peer)
	ip("link", "set", peer, "netns", ns)
	ip("addr", "add", fmt.Sprintf("198.18.%d.1/30", k), "dev", host)
	ip("link", "set", host, "up")
	ip("-n", ns, "addr", "add", o.addr+"/30", "dev", peer)
	ip("-n", ns, "addr", "add", o.linkLocal+"/32", "dev", peer)
	ip("-n", ns, "link", "set", peer, "up")
	ip("-n", ns, "link", "set", "lo", "up")
	ip("-n", ns, "route", "add", "default", "via", fmt.Sprintf("198.18.%d.1", k))
	ip("route", "add", o.linkLocal+"/32", "via", o.addr)

	// A listener made inside the namespace: a thread that enters it, opens
	// the socket and ends (a thread that changed namespace is not reused).
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread exits with this goroutine
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		l, err := net.Listen("tcp4", "0.0.0.0:8080")
		ch <- result{l, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	go func() {
		for {
			c, err := r.l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "ok-outside")
			c.Close()
		}
	}()
	o.addr += ":8080"
	o.linkLocal += ":8080"
	return o
}

// TestOpenModeGoesOut: an open sandbox reaches a server beyond the host (a
// network namespace the test made), but not a link-local address routed
// the same way, which the metadata rule drops, even while FORWARD accepts
// its bridge's traffic (as in Docker's gap); none and proxy sandboxes
// reach neither. Without the rule the link-local address answers, so the
// probe would see a hole. An open sandbox is told of resolvers it can
// reach: Docker's embedded one on runc, the host's under gVisor.
func TestOpenModeGoesOut(t *testing.T) { eachFlavour(t, true, testOpenModeGoesOut) }

func testOpenModeGoesOut(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	p, nets := e.networkProvider(t, freePort(t))
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	out := makeOutside(t)
	none, proxied, open := e.sandboxIn(t, p, provider.NetworkNone), e.sandboxIn(t, p, provider.NetworkProxy), e.sandboxIn(t, p, provider.NetworkOpen)
	if !e.reachesSoon(t, open, out.addr) {
		t.Fatal("an open sandbox cannot reach beyond the host")
	}
	if e.reaches(t, p, open, out.linkLocal) {
		t.Error("an open sandbox reached a link-local address")
	}
	if got, want := nameservers(e.mustExec(t, open.ID, "cat", "/etc/resolv.conf")), wantNameservers(t, fl); !slices.Equal(got, want) {
		t.Errorf("an open sandbox's nameservers = %v, want %v", got, want)
	}
	for name, h := range map[string]provider.Handle{"none": none, "proxy": proxied} {
		if e.reaches(t, p, h, out.addr) {
			t.Errorf("a %s sandbox reached beyond the host directly", name)
		}
	}
	// Docker deletes and inserts again FORWARD's jump to DOCKER-USER at
	// every network it creates, and in that gap FORWARD accepts what a
	// bridge sends out. An ACCEPT for this bridge on top of FORWARD stands
	// in for the gap: the metadata rule holds ahead of it.
	openBridge, _ := bridgeOf(t, e, nets.Open)
	ipt(t, "-I", "FORWARD", "1", "-i", openBridge, "-j", "ACCEPT")
	if e.reaches(t, p, open, out.linkLocal) {
		t.Error("an open sandbox reached a link-local address while FORWARD accepted its bridge's traffic (Docker's gap)")
	}
	for exec.Command("iptables", "-w", "-t", "raw", "-D", "PREROUTING", "-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP").Run() == nil {
	}
	if !e.reachesSoon(t, open, out.linkLocal) {
		t.Error("control: without the metadata rule the link-local address still did not answer; the probe proves nothing")
	}
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if e.reaches(t, p, open, out.linkLocal) {
		t.Error("SetupNetworks did not restore the metadata rule")
	}
}

// TestNetworkPoolExhausted: on an engine with room for one network (a
// dedicated one: its only address pool is one /24), a filler network
// takes it; then a world's network cannot be made, and the provider says
// why with 503 network_pool_exhausted, not as a missing sandbox.
func TestNetworkPoolExhausted(t *testing.T) {
	engine := testenv.StartDockerdWith(t, map[string]any{
		"default-address-pools": []map[string]any{{"base": "10.213.7.0/24", "size": 24}},
	})
	cli := testenv.DockerClientOn(t, engine.Host)
	ctx := t.Context()
	if _, err := cli.NetworkCreate(ctx, "pdk-test-filler", network.CreateOptions{Driver: "bridge",
		Labels: map[string]string{provider.LabelInstance: testenv.Instance(t)}}); err != nil {
		t.Fatalf("the filler network: %v", err)
	}
	p, err := docker.New(docker.Config{Host: engine.Host, Instance: testenv.Instance(t), ShimPath: testenv.Binary(t, "paddock-shim"),
		RunDir: testenv.ShortTempDir(t), DiskDir: testenv.DiskDir(t)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	err = p.CreateGroup(ctx, uuid.NewString())
	var pe *errdefs.Error
	if !errors.As(err, &pe) || pe.Code != docker.CodeNetworkPoolExhausted || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("a world's network with no address pool left: %v; want 503 %s", err, docker.CodeNetworkPoolExhausted)
	}
	if !strings.Contains(pe.Message, "address pool") {
		t.Fatalf("its message: %q", pe.Message)
	}
}
