package kubernetes_test

import (
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
	"github.com/paddockhq/paddock/internal/testenv"
)

// listen starts a TCP server on addr:0 that accepts and closes every
// connection, stopped at cleanup, and returns its address.
func listen(t *testing.T, addr netip.Addr) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp4", netip.AddrPortFrom(addr, 0).String())
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
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).AddrPort()
}

// connects reports whether a TCP connect from inside h's sandbox to addr
// succeeds (busybox nc, 3 s).
func (e *env) connects(t *testing.T, h provider.Handle, addr netip.AddrPort) bool {
	t.Helper()
	out, code := e.run(t, h, "sh", "-c", fmt.Sprintf("nc -w 3 %s %d </dev/null; echo rc=$?", addr.Addr(), addr.Port()))
	return code == 0 && out == "rc=0"
}

// TestNetworkModes: none reaches nothing; proxy reaches only the proxy's
// address and port; open reaches an address beyond but neither the
// metadata range, nor the address paddock dials agents from (where the
// test's API server is too), nor one the operator denies, all of which it does reach once its NetworkPolicy is gone (so
// the listeners there are reachable and the policy is what stops it).
func TestNetworkModes(t *testing.T) {
	k := kubeCluster(t)
	server := listen(t, k.HostAddr)
	proxy := listen(t, k.HostAddr)
	metadata := loListener(t, netip.MustParseAddr("169.254.77.77"))
	denied := loListener(t, netip.MustParseAddr("10.246.250.7"))
	// An address no setting closes: what the open mode is for.
	outside := loListener(t, netip.MustParseAddr("10.246.251.9"))
	agentFrom := testenv.KubeAgentFrom(t, k.KubeCluster)
	control := listen(t, agentFrom[0].Addr())
	e := newEnvOn(t, k, func(c *kubernetes.Config) {
		c.ProxyAddr = proxy
		c.DenyCIDRs = []netip.Prefix{netip.PrefixFrom(denied.Addr(), 32)}
	})

	spec := e.spec()
	spec.Network = provider.NetworkNone
	none := e.started(t, spec)
	if e.connects(t, none, server) || e.connects(t, none, proxy) {
		t.Error("a sandbox in mode none reached the host")
	}

	spec = e.spec()
	spec.Network = provider.NetworkProxy
	px := e.started(t, spec)
	if !e.connects(t, px, proxy) {
		t.Error("a sandbox in mode proxy did not reach the proxy")
	}
	if e.connects(t, px, server) {
		t.Error("a sandbox in mode proxy reached another port of the proxy's host")
	}

	spec = e.spec()
	spec.Network = provider.NetworkOpen
	open := e.started(t, spec)
	if !e.connects(t, open, outside) {
		t.Errorf("a sandbox in mode open did not reach %s", outside)
	}
	closed := map[string]netip.AddrPort{"the metadata range": metadata, "a denied address": denied, "the control plane's address": control}
	for what, addr := range closed {
		if e.connects(t, open, addr) {
			t.Errorf("a sandbox in mode open reached %s (%s)", what, addr)
		}
	}
	e.deletePolicy(t, open)
	testenv.Eventually(t, func() error {
		for what, addr := range closed {
			if !e.connects(t, open, addr) {
				return fmt.Errorf("without its policy the sandbox does not reach %s (%s) either", what, addr)
			}
		}
		return nil
	})
}

// TestAgentIsolation: from sandbox A, a TCP connect to sandbox B's agent
// port fails (B's policy admits only the control plane's address); with
// B's policy removed, it connects.
func TestAgentIsolation(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.spec()
	spec.Network = provider.NetworkOpen
	a := e.started(t, spec)
	b := e.started(t, e.spec())
	bAddr := netip.AddrPortFrom(netip.MustParseAddr(e.pod(t, b).Status.PodIP), kubernetes.AgentPort)
	if e.connects(t, a, bAddr) {
		t.Fatal("sandbox A connected to sandbox B's agent port")
	}
	e.deletePolicy(t, b)
	testenv.Eventually(t, func() error {
		if !e.connects(t, a, bAddr) {
			return fmt.Errorf("with B's policy removed, A still cannot connect to %s", bAddr)
		}
		return nil
	})
}

// deletePolicy deletes h's NetworkPolicy.
func (e *env) deletePolicy(t *testing.T, h provider.Handle) {
	t.Helper()
	if err := e.k.Client.NetworkingV1().NetworkPolicies(e.k.Namespace).Delete(e.ctx(t), h.ID+"-net", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// loListener is a listener on addr, which the test puts on this host's
// loopback until it ends: a link-local one stands in for a cloud's
// metadata service, another for an address the operator denies.
func loListener(t *testing.T, addr netip.Addr) netip.AddrPort {
	t.Helper()
	if out, err := exec.Command("ip", "addr", "add", addr.String()+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("adding %s to lo: %v: %s", addr, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", addr.String()+"/32", "dev", "lo").Run() })
	return listen(t, addr)
}
