package docker_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"
	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// networkProvider returns a provider of e with egress networks of its own,
// removed (with their firewall rules) when the test ends.
func (e *env) networkProvider(t *testing.T, proxyPort int) (*docker.Provider, *docker.Networks) {
	t.Helper()
	suffix := uuid.NewString()[:8]
	nets := &docker.Networks{Proxy: "pdk-test-p-" + suffix, Open: "pdk-test-o-" + suffix, ProxyPort: proxyPort}
	p, err := docker.New(docker.Config{
		Instance: e.instance, ShimPath: e.shim, RunDir: e.runDir, DiskDir: e.diskDir,
		StartTimeout: 30 * time.Second, Networks: nets,
	}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sweep(e.instance) // containers first: a network in use cannot go
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.RemoveNetworks(ctx); err != nil {
			t.Errorf("RemoveNetworks: %v", err)
		}
		p.Close()
	})
	return p, nets
}

// hostServer answers "ok-NAME" to every connection on addr.
func hostServer(t *testing.T, addr, name string) string {
	t.Helper()
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
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
	return l.Addr().String()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
// which shows the probes would see a hole.
func TestNetworksKeepTheHostAway(t *testing.T) {
	e := newEnv(t)
	proxyPort := freePort(t)
	p, nets := e.networkProvider(t, proxyPort)
	proxyAddr, err := p.SetupNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
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
	onBridge := hostServer(t, gw+":0", "bridge-address")
	onAll := hostServer(t, "0.0.0.0:0", "all-addresses")
	_, allPort, _ := net.SplitHostPort(onAll)
	hostTargets := []string{onBridge, net.JoinHostPort(gw, allPort), net.JoinHostPort(openGW, allPort), net.JoinHostPort(docker0, allPort)}

	sandbox := func(mode provider.NetworkPolicy) provider.Handle {
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
	none, proxied, open := sandbox(provider.NetworkNone), sandbox(provider.NetworkProxy), sandbox(provider.NetworkOpen)

	if !e.reaches(t, p, proxied, proxyAddr.String()) {
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
	if err := exec.Command("iptables", "-w", "-C", "DOCKER-USER", "-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP").Run(); err != nil {
		t.Errorf("no rule keeps open sandboxes from the metadata range: %v", err)
	}

	// The control: without the INPUT drop the host is reachable, so the
	// probes above do see a hole when there is one.
	for _, bridge := range []string{proxyBridge, openBridge} {
		for exec.Command("iptables", "-w", "-D", "INPUT", "-i", bridge, "-j", "DROP").Run() == nil {
		}
	}
	if !e.reaches(t, p, proxied, onBridge) {
		t.Error("control: without the INPUT drop a proxy sandbox still could not reach the host; the probe proves nothing")
	}
	if !e.reaches(t, p, open, net.JoinHostPort(openGW, allPort)) {
		t.Error("control: without the INPUT drop an open sandbox still could not reach the host; the probe proves nothing")
	}
	if _, err := p.SetupNetworks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if e.reaches(t, p, proxied, onBridge) || !e.reaches(t, p, proxied, proxyAddr.String()) {
		t.Error("SetupNetworks did not restore the rules in order")
	}
}
