package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// installation is one paddock installation a test runs: a server with its
// own data and run directories, instance id and egress networks (named
// after the instance id), and a host of its own (svc.test in its host map).
type installation struct {
	*server
	c                      *pc.Client
	bin, shim              string
	instance, data, runDir string
	env                    []string
	svcPort                string // svc.test's port
}

const installationKey = "pdk_00000000000000000000000000000000000000000000a1b2"

// newInstallation starts an installation named name, with egress on and
// the defaults for everything else that two installations could share
// (proxy port, network names), and makes org acme and workspace dev.
func newInstallation(t *testing.T, name string) *installation {
	t.Helper()
	testenv.RequireDocker(t, testenv.DefaultImage)
	svc := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", name)
	})}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go svc.Serve(l)
	t.Cleanup(func() { svc.Close() })
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	in := &installation{
		bin: testenv.Binary(t, "paddock"), shim: testenv.Binary(t, "paddock-shim"),
		instance: testenv.Instance(t) + "-" + name, data: t.TempDir(), runDir: filepath.Join(testenv.ShortTempDir(t), "r"),
		env:     []string{"PADDOCK_EGRESS_DISABLED=false", "PADDOCK_EGRESS_HOSTS=svc.test=127.0.0.1:" + port},
		svcPort: port,
	}
	in.start(t)
	if _, err := in.c.CreateOrg(t.Context(), pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.c.CreateWorkspace(t.Context(), "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	return in
}

// start (re)starts the installation's server.
func (in *installation) start(t *testing.T) {
	t.Helper()
	in.server = serveIn(t, in.bin, in.shim, in.data, in.runDir, in.instance, installationKey, in.env...)
	in.c = sdkFor(t, in.server, installationKey)
}

// proxyRuntime starts a proxy-mode runtime allowed svc.test.
func (in *installation) proxyRuntime(t *testing.T) string {
	t.Helper()
	p, err := in.c.CreateProject(t.Context(), "acme", "dev", pc.CreateProjectRequest{Name: "agent", Runtime: &pc.RuntimeConfig{
		Image: testenv.DefaultImage, MemoryMB: 256,
		Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{"svc.test:" + in.svcPort}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.c.StartRuntime(t.Context(), "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	return p.RuntimeID
}

// sh runs a shell script in runtime rid.
func (in *installation) sh(t *testing.T, rid, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := in.c.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"bash", "-c", script}})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
}

// reachesItsHost checks that runtime rid reaches the installation's own
// svc.test through its own proxy.
func (in *installation) reachesItsHost(t *testing.T, rid, name, when string) {
	t.Helper()
	if got := in.sh(t, rid, "curl -sS -m 30 http://svc.test:"+in.svcPort+"/"); got != "hello from "+name {
		t.Errorf("%s: installation %s's sandbox through its proxy: %q", when, name, got)
	}
}

// TestTwoInstallations: two installations on one host, with different
// instance ids and otherwise the same defaults (proxy port 3128, network
// names), each serve proxy-mode sandboxes that reach their allowed host
// through their own proxy, and keep doing so when the other starts or
// restarts. A server given the other's network is refused at start with a
// message that names the setting to change.
func TestTwoInstallations(t *testing.T) {
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, testenv.Instance(t)) })
	a := newInstallation(t, "a")
	ra := a.proxyRuntime(t)
	a.reachesItsHost(t, ra, "a", "alone")

	b := newInstallation(t, "b")
	rb := b.proxyRuntime(t)
	b.reachesItsHost(t, rb, "b", "beside a")
	a.reachesItsHost(t, ra, "a", "after b started")
	pa, pb := a.sh(t, ra, "echo ${HTTP_PROXY#*@}"), b.sh(t, rb, "echo ${HTTP_PROXY#*@}")
	if pa == pb || !strings.HasSuffix(pa, ":3128") || !strings.HasSuffix(pb, ":3128") {
		t.Errorf("proxies: a at %q, b at %q; want each on its own network's gateway, at the default port", pa, pb)
	}

	// a restarts, with b running: its rules go in again, b's stay.
	a.stop(t)
	a.start(t)
	a.reachesItsHost(t, ra, "a", "after a restarted")
	b.reachesItsHost(t, rb, "b", "after a restarted")

	// A server must not join a network of another installation.
	aNets := dockerNetworks(t, a.instance)
	runDir := filepath.Join(testenv.ShortTempDir(t), "r")
	out := serveFails(t, a.bin, a.shim, t.TempDir(), runDir, testenv.Instance(t)+"-c", installationKey,
		"PADDOCK_EGRESS_DISABLED=false", "PADDOCK_EGRESS_PROXY_NETWORK="+aNets[0])
	for _, w := range []string{fmt.Sprintf("Docker network %q belongs to another paddock installation (instance %q", aNets[0], a.instance), "PADDOCK_EGRESS_PROXY_NETWORK"} {
		if !strings.Contains(out, w) {
			t.Errorf("a start on another installation's network said:\n%s\nwant %q in it", out, w)
		}
	}
	if m := testenv.MountsUnder(runDir); len(m) > 0 {
		t.Errorf("a failed start left mounts under its run directory: %v", m)
	}
	a.reachesItsHost(t, ra, "a", "after the failed start")
	b.reachesItsHost(t, rb, "b", "after the failed start")
}

// TestFailedStartLeavesNothing: a server whose ports are taken (by another
// installation, say) exits with a message that names the setting to
// change, and leaves no mount behind: not even the run directory's tmpfs,
// which it mounts before it learns that the proxy port is taken.
func TestFailedStartLeavesNothing(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, testenv.Instance(t)) })
	bin, shim := testenv.Binary(t, "paddock"), testenv.Binary(t, "paddock-shim")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyAll, err := net.Listen("tcp4", "0.0.0.0:0") // holds the port on every address, the gateways' too
	if err != nil {
		t.Fatal(err)
	}
	defer busyAll.Close()
	busyPort := strconv.Itoa(busyAll.Addr().(*net.TCPAddr).Port)
	for _, tc := range []struct {
		name string
		env  []string
		want []string
		// afterRunDir: the start fails once the run directory is set up
		// (a tmpfs, the shim copied into it).
		afterRunDir bool
	}{
		{"a busy SSH port", []string{"PADDOCK_SSH_LISTEN=" + busy.Addr().String()},
			[]string{"ssh gateway: listen on " + busy.Addr().String(), "address already in use (another installation?): set ssh_listen / PADDOCK_SSH_LISTEN"}, false},
		{"a busy proxy port", []string{"PADDOCK_EGRESS_DISABLED=false", "PADDOCK_EGRESS_PROXY_PORT=" + busyPort},
			[]string{"egress proxy port ", ":" + busyPort + ": listen tcp4", "address already in use (another installation?): set egress.proxy_port / PADDOCK_EGRESS_PROXY_PORT"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir := filepath.Join(testenv.ShortTempDir(t), "r")
			instance := testenv.Instance(t)
			out := serveFails(t, bin, shim, t.TempDir(), runDir, instance, installationKey, tc.env...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the failed start said:\n%s\nwant %q in it", out, w)
				}
			}
			if m := testenv.MountsUnder(runDir); len(m) > 0 {
				t.Errorf("a failed start left mounts under its run directory: %v", m)
			}
			if !tc.afterRunDir {
				return
			}
			// The server made the run directory and copied the shim into
			// its tmpfs: the directory is there, and empty, the copy gone
			// with the tmpfs (without one it would still be there).
			if entries, err := os.ReadDir(runDir); err != nil || len(entries) > 0 {
				t.Errorf("the run directory after the failed start: %v, %v; want it there and empty", entries, err)
			}
			// The other program on the proxy port is not let in.
			bridge := bridgeOfNetwork(t, dockerNetworks(t, instance)[0])
			rules, err := exec.Command("iptables", "-w", "-S", docker.FirewallChain(bridge)).Output()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(rules), "--dport "+busyPort+" ") {
				t.Errorf("a start that could not bind the proxy port let the sandboxes reach it:\n%s", rules)
			}
		})
	}
}

// TestFirewallFailureFailsTheStart: a server whose firewall rules cannot
// hold, though iptables runs, does not start: it must not serve proxy or
// open sandboxes on a bridge that may be open to the host. (The server
// runs in a network namespace of the test's, where the engine's bridges
// are not: rules naming them there would hold nothing back.)
func TestFirewallFailureFailsTheStart(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, testenv.Instance(t)) })
	ns := "pdkt-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v\n%s", err, out)
	}
	bin, shim := testenv.Binary(t, "paddock"), testenv.Binary(t, "paddock-shim")
	cmd := serveCommand(t, bin, shim, t.TempDir(), filepath.Join(testenv.ShortTempDir(t), "r"), testenv.Instance(t), installationKey,
		"PADDOCK_EGRESS_DISABLED=false")
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path, cmd.Args = ip, append([]string{"ip", "netns", "exec", ns}, cmd.Args...)
	out := runFails(t, cmd)
	if !strings.Contains(out, docker.CodeFirewallFailed) || !strings.Contains(out, "not in paddock's network namespace") {
		t.Errorf("the failed start said:\n%s\nwant %s and the rule that failed in it", out, docker.CodeFirewallFailed)
	}
}

// serveFails starts the built server as serveIn would and waits for it to
// exit without listening; it returns what it wrote to stderr.
func serveFails(t *testing.T, bin, shim, dataDir, runDir, instance, key string, extraEnv ...string) string {
	t.Helper()
	return runFails(t, serveCommand(t, bin, shim, dataDir, runDir, instance, key, extraEnv...))
}

// runFails runs a server command and waits for it to exit without
// listening; it returns what it wrote to stderr.
func runFails(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("paddock serve exited 0; want a failed start\n%s%s", stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("paddock serve did not exit within 2 min\n%s%s", stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "paddock listening on") {
		t.Fatalf("paddock serve listened before it failed:\n%s", stdout.String())
	}
	return stderr.String()
}

// bridgeOfNetwork is the Linux bridge of Docker network name.
func bridgeOfNetwork(t *testing.T, name string) string {
	t.Helper()
	insp, err := testenv.DockerClient(t).NetworkInspect(t.Context(), name, network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return insp.Options["com.docker.network.bridge.name"]
}

// dockerNetworks lists the names of the networks labelled instance: the
// proxy network first.
func dockerNetworks(t *testing.T, instance string) []string {
	t.Helper()
	cli := testenv.DockerClient(t)
	ns, err := cli.NetworkList(t.Context(), network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelInstance+"="+instance))})
	if err != nil {
		t.Fatal(err)
	}
	var proxy, other []string
	for _, n := range ns {
		if n.Internal {
			proxy = append(proxy, n.Name)
		} else {
			other = append(other, n.Name)
		}
	}
	if len(proxy) != 1 || len(other) != 1 {
		t.Fatalf("networks of instance %s: proxy %v, open %v; want one of each", instance, proxy, other)
	}
	return append(proxy, other...)
}
