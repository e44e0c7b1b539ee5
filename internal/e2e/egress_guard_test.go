package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestEgressGuard: no tenant rule opens the host. A proxy sandbox whose
// rules allow every address (0.0.0.0/0, ::/0) and every name on the ports
// in play is refused, in every encoding, by plain HTTP and by CONNECT:
// paddock's own API on the host's loopback, a listener on the host at the
// Docker networks' gateways, and a metadata stand-in (a link-local address
// in a network namespace the test makes). An
// admin's allow rule naming any of them answers 400
// internal_address_not_allowed. The installation's egress.allow_internal
// opens one address of the namespace and nothing else; its egress.hosts
// opens the host's listener for one name on its port, and no host map
// name reaches another port (paddock's API among them). An open sandbox
// reaches beyond the host (the namespace's own address) but neither the
// host nor the metadata stand-in, in any encoding, nor the proxy. Proxy
// credentials work only from their own sandbox: 407 from another sandbox
// and from the host, and no answer from an open sandbox.
func TestEgressGuard(t *testing.T) {
	ns := makeStandIn(t)
	bridge := listenEverywhere(t, "a listener on the host")
	const key = "pdk_00000000000000000000000000000000000000000000e9e5"
	// The host map opens the host's listener for mirror.test on its port,
	// and loopback for web.test on 80 and 443: nothing else of the host.
	s, c := serveWithEgress(t, key, "PADDOCK_EGRESS_ALLOW_INTERNAL="+ns.opened.Addr().String(),
		"PADDOCK_EGRESS_HOSTS=mirror.test="+bridge.String()+",web.test=127.0.0.1")
	ctx := t.Context()
	api := netip.MustParseAddrPort(strings.TrimPrefix(s.url, "http://"))
	gateways := []netip.Addr{gatewayOf(t, s.proxyNet), gatewayOf(t, s.openNet)}
	// docker0, where the engine has it and the host itself reaches its
	// listener there. The proxy dials from the host: where the host
	// cannot reach an address, neither can the proxy. (Seen once in CI:
	// the host's own connection to docker0's gateway was refused.)
	if gw, ok := tryGatewayOf("bridge"); ok {
		at := netip.AddrPortFrom(gw, bridge.Port()).String()
		if body, err := tryHostGet(at); err == nil && body != "" {
			gateways = append(gateways, gw)
		} else {
			out, _ := exec.Command("ip", "-br", "addr").CombinedOutput()
			t.Logf("docker0's gateway %s does not answer from the host (%v), so it is not probed; the host's addresses:\n%s", gw, err, out)
		}
	}

	// The tenant's rules: every address, every name on the ports in play.
	apiPort, bridgePort := strconv.Itoa(int(api.Port())), strconv.Itoa(int(bridge.Port()))
	allow := []string{"0.0.0.0/0", "::/0", "*:" + apiPort, "*:" + bridgePort, "*"}
	guarded := startIn(t, c, "guarded", pc.NetworkProxy, allow)
	other := startIn(t, c, "other", pc.NetworkProxy, []string{ns.opened.String()})
	open := startIn(t, c, "open", pc.NetworkOpen, nil)

	t.Run("rules naming internal addresses are refused", func(t *testing.T) {
		for _, rule := range []string{
			"127.0.0.0/8", "2130706433:" + apiPort, "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]:" + apiPort,
			"localhost:" + apiPort, "169.254.169.254", ns.meta.Addr().String(), ns.hostSide.String(), "10.0.0.0/8",
			netip.AddrPortFrom(gateways[0], bridge.Port()).String(), gateways[1].String() + "/32",
		} {
			_, err := c.ConfigureRuntime(ctx, "acme", "dev", guarded, pc.RuntimePatch{Network: &pc.NetworkPatch{Allow: &[]string{"pypi.org", rule}}})
			if pe := (*pc.Error)(nil); !errors.As(err, &pe) || pe.StatusCode != 400 || pe.Code != "internal_address_not_allowed" || !strings.Contains(pe.Message, rule) {
				t.Errorf("allow %q: %v, want 400 internal_address_not_allowed naming the rule", rule, err)
			}
		}
		_, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "refused", Runtime: &pc.RuntimeConfig{
			Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{"127.0.0.0/8"}},
		}})
		if pe := (*pc.Error)(nil); !errors.As(err, &pe) || pe.Code != "internal_address_not_allowed" {
			t.Errorf("create with allow 127.0.0.0/8: %v", err)
		}
		// The address the installation opened may be named.
		if _, err := c.ConfigureRuntime(ctx, "acme", "dev", guarded, pc.RuntimePatch{
			Network: &pc.NetworkPatch{Allow: ptr(append(allow, ns.opened.String()))},
		}); err != nil {
			t.Fatalf("allow the opened address: %v", err)
		}
	})

	// What the proxy sandbox asks for, as written: each encoding of each
	// closed address, plain and through CONNECT.
	// Beyond the loopback, all of them answer from the host, and an
	// open sandbox tries them too.
	beyond := []netip.AddrPort{ns.meta, netip.AddrPortFrom(ns.hostSide, bridge.Port())}
	for _, gw := range gateways {
		beyond = append(beyond, netip.AddrPortFrom(gw, bridge.Port()))
	}
	for _, ap := range beyond {
		if body, err := tryHostGet(ap.String()); err != nil || body == "" {
			out, _ := exec.Command("ip", "-br", "addr").CombinedOutput()
			t.Fatalf("control: nothing answers the host at %s (%v); the host's addresses:\n%s", ap, err, out)
		}
	}
	// (Not the real metadata address: were the guard to fail, the test
	// would reach it. The unit tests classify it.)
	var reqs []proxyReq
	for _, ap := range append([]netip.AddrPort{api}, beyond...) {
		for _, host := range hostEncodings(ap.Addr()) {
			reqs = append(reqs, proxyReq{"GET", hostPort(host, ap.Port())}, proxyReq{"CONNECT", hostPort(host, ap.Port())})
		}
	}
	var opened []proxyReq
	for _, host := range hostEncodings(ns.opened.Addr()) {
		opened = append(opened, proxyReq{"GET", hostPort(host, ns.opened.Port())}, proxyReq{"CONNECT", hostPort(host, ns.opened.Port())})
	}

	t.Run("proxy mode", func(t *testing.T) {
		for _, r := range proxyProbe(t, c, guarded, "", reqs) {
			if r.Status != http.StatusForbidden || r.Egress != "denied" {
				t.Errorf("%s %s: %d %q %q, want the proxy's 403", r.Method, r.Authority, r.Status, r.Egress, r.Body)
			}
		}
		// A host map entry opens its address for its name on its port;
		// the rules that match the name on other ports, paddock's API
		// among them, meet the guard.
		mirror := []proxyReq{{"GET", "mirror.test:" + bridgePort}, {"CONNECT", "mirror.test:" + bridgePort}}
		for _, r := range proxyProbe(t, c, guarded, "", mirror) {
			if r.Status != http.StatusOK || !strings.Contains(r.Body, "a listener on the host") {
				t.Errorf("%s %s (the host map's): %d %q, want the host's listener", r.Method, r.Authority, r.Status, r.Body)
			}
		}
		var mapped []proxyReq
		for _, authority := range []string{"mirror.test:" + apiPort, "web.test:" + apiPort, "web.test:" + bridgePort} {
			mapped = append(mapped, proxyReq{"GET", authority}, proxyReq{"CONNECT", authority})
		}
		for _, r := range proxyProbe(t, c, guarded, "", mapped) {
			if r.Status != http.StatusForbidden || r.Egress != "denied" {
				t.Errorf("%s %s (a host map name on another port): %d %q %q, want the proxy's 403", r.Method, r.Authority, r.Status, r.Egress, r.Body)
			}
		}
		// The installation opened one address: it answers, in every
		// encoding; its neighbours stay closed (above).
		for _, r := range proxyProbe(t, c, guarded, "", opened) {
			if r.Status != http.StatusOK || !strings.Contains(r.Body, "stand-in") {
				t.Errorf("%s %s (opened): %d %q, want the stand-in's answer", r.Method, r.Authority, r.Status, r.Body)
			}
		}
	})

	t.Run("credentials stay with their sandbox", func(t *testing.T) {
		mine := proxyURL(t, c, guarded)
		probe := []proxyReq{{"GET", ns.opened.String()}, {"CONNECT", ns.opened.String()}}
		for _, r := range proxyProbe(t, c, other, "", probe) {
			if r.Status != http.StatusOK {
				t.Errorf("%s %s with its own credentials: %d %q", r.Method, r.Authority, r.Status, r.Body)
			}
		}
		for _, r := range proxyProbe(t, c, other, mine, probe) {
			if r.Status != http.StatusProxyAuthRequired {
				t.Errorf("%s %s with another sandbox's credentials: %d, want 407", r.Method, r.Authority, r.Status)
			}
		}
		if status := proxyFromHost(t, mine, ns.opened.String()); status != http.StatusProxyAuthRequired {
			t.Errorf("a sandbox's credentials from the host: %d, want 407", status)
		}
		u, _ := url.Parse(mine)
		got := shIn(t, c, open, "curl -s -m 5 -o /dev/null -w '%{http_code}' -x '"+mine+"' http://"+ns.opened.String()+"/; echo \" exit=$?\"")
		if !strings.HasPrefix(got, "000") {
			t.Errorf("a proxy sandbox's credentials from an open sandbox, to the proxy at %s: %q, want no answer", u.Host, got)
		}
	})

	t.Run("open mode", func(t *testing.T) {
		var targets []string
		for _, ap := range beyond { // the host's loopback is the sandbox's own there
			for _, host := range hostEncodings(ap.Addr()) {
				targets = append(targets, hostPort(host, ap.Port()))
			}
		}
		got := openProbe(t, c, open, append(targets, ns.opened.String()))
		if got[ns.opened.String()] != "200" {
			t.Fatalf("control: an open sandbox did not reach beyond the host (%s): %q", ns.opened, got[ns.opened.String()])
		}
		for _, target := range targets {
			if got[target] != "000" {
				t.Errorf("open sandbox to %s: %q, want no answer", target, got[target])
			}
		}
	})
}

// standIn is a network namespace behind a veth pair, with a listener on
// port 80 of two addresses: meta, a link-local address standing in for
// cloud metadata (routed from the host like the real one), and opened, the
// namespace's own, which the test's installation opens.
type standIn struct {
	meta, opened netip.AddrPort
	hostSide     netip.Addr // the host's end of the pair
}

// standInEnv asks the test binary to serve HTTP on the address it names
// (see TestMain); the test runs it in the namespace with ip netns exec.
const standInEnv = "PADDOCK_E2E_STAND_IN"

// serveStandIn answers every request with where it was received, and
// prints "listening" once it listens.
func serveStandIn(addr string) int {
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	err = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "metadata stand-in at %s\n", r.Context().Value(http.LocalAddrContextKey))
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// makeStandIn makes the namespace (198.19.k.0/30, 169.254.169.k; k apart
// from other tests' and never the real metadata address) and its listener,
// all removed when the test ends.
func makeStandIn(t *testing.T) standIn {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and ip(8) to make a network namespace")
	}
	id := uuid.NewString()[:6]
	name, host, peer := "pdke-"+id, "pdke"+id+"h", "pdke"+id+"n"
	k := 1 + int(uuid.New()[0])%250
	si := standIn{
		meta:     netip.MustParseAddrPort(fmt.Sprintf("169.254.169.%d:80", k)),
		opened:   netip.MustParseAddrPort(fmt.Sprintf("198.19.%d.2:80", k)),
		hostSide: netip.MustParseAddr(fmt.Sprintf("198.19.%d.1", k)),
	}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("netns", "add", name)
	t.Cleanup(func() {
		_ = exec.Command("ip", "route", "del", si.meta.Addr().String()+"/32").Run()
		_ = exec.Command("ip", "netns", "del", name).Run() // and the veth pair with it
	})
	ip("link", "add", host, "type", "veth", "peer", "name", peer)
	ip("link", "set", peer, "netns", name)
	ip("addr", "add", si.hostSide.String()+"/30", "dev", host)
	ip("link", "set", host, "up")
	ip("-n", name, "addr", "add", si.opened.Addr().String()+"/30", "dev", peer)
	ip("-n", name, "addr", "add", si.meta.Addr().String()+"/32", "dev", peer)
	ip("-n", name, "link", "set", peer, "up")
	ip("-n", name, "link", "set", "lo", "up")
	ip("-n", name, "route", "add", "default", "via", si.hostSide.String())
	ip("route", "add", si.meta.Addr().String()+"/32", "via", si.opened.Addr().String())

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", name, self)
	cmd.Env = append(os.Environ(), standInEnv+"=0.0.0.0:80")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // ip netns exec execs the listener: this is its pid
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("the stand-in did not start: %q %v %s", line, err, stderr.String())
	}
	// From the host, both addresses answer: what the sandboxes cannot
	// reach is there.
	for _, ap := range []netip.AddrPort{si.meta, si.opened} {
		if body := hostGet(t, ap.String()); !strings.Contains(body, "stand-in") {
			t.Fatalf("the stand-in at %s: %q", ap, body)
		}
	}
	return si
}

// listenEverywhere serves on every address of the host (0.0.0.0), so
// that it answers at the gateways of the Docker networks, and returns its
// loopback address.
func listenEverywhere(t *testing.T, answer string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, answer) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	ap := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(l.Addr().(*net.TCPAddr).Port))
	if body := hostGet(t, ap.String()); body != answer {
		t.Fatalf("the listener: %q", body)
	}
	return ap
}

func hostGet(t *testing.T, hostport string) string {
	t.Helper()
	body, err := tryHostGet(hostport)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func tryHostGet(hostport string) (string, error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil}}
	res, err := c.Get("http://" + hostport + "/")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(res.Body).WriteTo(&b)
	return b.String(), err
}

func gatewayOf(t *testing.T, network string) netip.Addr {
	t.Helper()
	a, ok := tryGatewayOf(network)
	if !ok {
		t.Fatalf("no IPv4 gateway for network %s", network)
	}
	return a
}

func tryGatewayOf(network string) (netip.Addr, bool) {
	out, err := exec.Command("docker", "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}", network).Output()
	if err != nil {
		return netip.Addr{}, false
	}
	for _, f := range strings.Fields(string(out)) {
		if a, err := netip.ParseAddr(f); err == nil && a.Is4() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// startIn creates a project named name whose runtime has network mode
// and allow rules, starts it, and returns the runtime's id.
func startIn(t *testing.T, c *pc.Client, name string, mode string, allow []string) string {
	t.Helper()
	p, err := c.CreateProject(t.Context(), "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: &pc.RuntimeConfig{
		Image: testenv.DefaultImage, MemoryMB: 256, Network: &pc.NetworkPolicy{Mode: mode, Allow: allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(t.Context(), "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	return p.RuntimeID
}

// sh runs a bash script in a runtime's sandbox and returns its output.
func shIn(t *testing.T, c *pc.Client, runtimeID, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := c.Exec(ctx, "acme", "dev", runtimeID, pc.ExecRequest{Argv: []string{"bash", "-c", script}})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
}

func proxyURL(t *testing.T, c *pc.Client, runtimeID string) string {
	t.Helper()
	u := shIn(t, c, runtimeID, `echo "$HTTP_PROXY"`)
	if !strings.HasPrefix(u, "http://") {
		t.Fatalf("HTTP_PROXY = %q", u)
	}
	return u
}

// proxyReq is one request to the proxy: GET http://authority/ or CONNECT
// authority.
type proxyReq struct{ Method, Authority string }

// proxyRes is what the proxy answered.
type proxyRes struct {
	proxyReq
	Status int
	Egress string // X-Paddock-Egress
	Body   string // the end of the body; through a tunnel, of a GET sent in it
}

// probeScript sends each request to the proxy exactly as written (no
// client normalises the host), with the credentials of the proxy URL
// given or the sandbox's own (HTTP_PROXY).
const probeScript = `
import base64, json, os, socket, sys, urllib.parse
arg = json.loads(sys.argv[1])
u = urllib.parse.urlsplit(arg["proxy"] or os.environ["HTTP_PROXY"])
cred = base64.b64encode((urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)).encode()).decode()
out = []
for r in arg["requests"]:
    m, a = r["Method"], r["Authority"]
    s = socket.create_connection((u.hostname, u.port), timeout=60)
    target = a if m == "CONNECT" else "http://" + a + "/"
    s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\nConnection: close\r\n\r\n" % (m, target, a, cred)).encode())
    f = s.makefile("rb")
    status = f.readline().decode().split()
    code = int(status[1]) if len(status) > 1 else 0
    egress = ""
    while True:
        line = f.readline().decode()
        if line.strip() == "":
            break
        k, _, v = line.partition(":")
        if k.strip().lower() == "x-paddock-egress":
            egress = v.strip()
    body = b""
    if m == "CONNECT" and code == 200:
        s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        body = f.read()
    elif m != "CONNECT":
        body = f.read()
    out.append(dict(r, Status=code, Egress=egress, Body=body.decode(errors="replace")[-300:]))
    s.close()
print(json.dumps(out))
`

// proxyProbe sends reqs to the proxy from a runtime's sandbox.
func proxyProbe(t *testing.T, c *pc.Client, runtimeID, proxy string, reqs []proxyReq) []proxyRes {
	t.Helper()
	arg, err := json.Marshal(map[string]any{"proxy": proxy, "requests": reqs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	res, err := c.Exec(ctx, "acme", "dev", runtimeID, pc.ExecRequest{Argv: []string{"python3", "-c", probeScript, string(arg)}})
	if err != nil {
		t.Fatal(err)
	}
	var out []proxyRes
	if err := json.Unmarshal(res.Stdout, &out); err != nil || len(out) != len(reqs) {
		t.Fatalf("probe: %v: %s %s", err, res.Stdout, res.Stderr)
	}
	return out
}

// proxyFromHost sends one GET to the proxy from the host, with the
// credentials in proxy.
func proxyFromHost(t *testing.T, proxy, authority string) int {
	t.Helper()
	u, err := url.Parse(proxy)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pass, _ := u.User.Password()
	cred := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
	fmt.Fprintf(conn, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\nConnection: close\r\n\r\n", authority, authority, cred)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// openProbe fetches http://target/ for each target from an open sandbox,
// directly, all at once, and returns curl's status for each ("000": no
// answer).
func openProbe(t *testing.T, c *pc.Client, runtimeID string, targets []string) map[string]string {
	t.Helper()
	var script strings.Builder
	for _, target := range targets {
		fmt.Fprintf(&script, "echo \"%s $(curl -s -g --noproxy '*' -m 5 -o /dev/null -w '%%{http_code}' 'http://%s/')\" &\n", target, target)
	}
	script.WriteString("wait\n")
	got := map[string]string{}
	for _, line := range strings.Split(shIn(t, c, runtimeID, script.String()), "\n") {
		if target, code, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			got[target] = code
		}
	}
	return got
}

// hostEncodings writes an IPv4 address as clients may: dotted, decimal,
// hex, octal, short forms and IPv4-mapped IPv6, and localhost for the
// loopback.
func hostEncodings(a netip.Addr) []string {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	out := []string{
		a.String(),
		strconv.FormatUint(uint64(v), 10),
		fmt.Sprintf("0x%08x", v),
		fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("%d.%d", b[0], v&0xffffff),
		fmt.Sprintf("%d.%d.%d", b[0], b[1], v&0xffff),
		"[::ffff:" + a.String() + "]",
	}
	if a.IsLoopback() {
		out = append(out, "localhost")
	}
	return out
}

// hostPort joins a host as hostEncodings writes it (IPv6 in brackets) and
// a port.
func hostPort(host string, port uint16) string { return host + ":" + strconv.Itoa(int(port)) }
