package egress

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// encodings writes IPv4 address a in every form a client may send: dotted,
// decimal, hex, octal, short, hex and octal parts, IPv4-mapped IPv6.
func encodings(a netip.Addr) []string {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return []string{
		a.String(),
		fmt.Sprint(v),
		fmt.Sprintf("0x%08x", v),
		fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("%d.%d", b[0], v&0xffffff),
		fmt.Sprintf("%d.%d.%d", b[0], b[1], v&0xffff),
		fmt.Sprintf("0x%x.0x%x.%d.0%o", b[0], b[1], b[2], b[3]),
		"::ffff:" + a.String(),
		fmt.Sprintf("::ffff:%x:%x", v>>16, v&0xffff),
	}
}

func TestParseIPv4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"169.254.43518", "169.254.169.254"},
		{"0", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"127.0.0.256", ""},
		{"1.2.3.4.5", ""},
		{"08.0.0.1", ""},
		{"0x", ""},
		{"1..2", ""},
		{"", ""},
		{"example.com", ""},
		{"123.example", ""},
		{"0x7g.1", ""},
	} {
		got, ok := ParseIPv4(tc.in)
		if (tc.want == "") == ok || ok && got.String() != tc.want {
			t.Errorf("ParseIPv4(%q) = %v, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// testGuard opens 10.1.2.0/24 and 169.254.10.3, and holds one host
// address and one installation network.
func testGuard() *Guard {
	g := NewGuard(GuardConfig{
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("169.254.10.3/32")},
		HostAddrs:     func(bool) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("198.51.100.200/32")} },
	})
	g.AddNetworks(netip.MustParsePrefix("203.0.113.0/28"))
	return g
}

func TestGuardClosesEveryEncoding(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		addr string
		why  string // "" for open
	}{
		{"127.0.0.1", "loopback"},
		{"127.9.9.9", "loopback"},
		{"169.254.169.254", "link-local"},
		{"169.254.10.3", ""}, // opened by the installation
		{"169.254.10.4", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"10.0.0.8", "private"},
		{"10.1.2.3", ""}, // opened
		{"172.17.0.1", "private"},
		{"192.168.1.1", "private"},
		{"100.64.0.1", "shared"},
		{"224.0.0.1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"198.51.100.200", "the host's own"},
		{"203.0.113.5", "one of the installation's networks"},
		{"203.0.113.17", ""},
		{"93.184.216.34", ""},
	} {
		for _, enc := range encodings(netip.MustParseAddr(tc.addr)) {
			a, ok := parseAddr(enc)
			if !ok {
				t.Fatalf("%s: not read as an address", enc)
			}
			if got := g.Closed(a); !strings.HasPrefix(got, tc.why) || (tc.why == "") != (got == "") {
				t.Errorf("Closed(%s) = %q, want %q", enc, got, tc.why)
			}
		}
	}
	for _, tc := range []struct{ addr, why string }{
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"fd00::1", "private"},
		{"ff02::1", "multicast"},
		{"64:ff9b::7f00:1", "NAT64"},
		{"2002:7f00:1::1", "6to4"},
		{"2001:0:7f00:1::1", "Teredo"},
		{"fec0::1", "site-local"},
		{"::ffff:0:7f00:1", "IPv4-translated"},
		{"100::1", "reserved (discard)"},
		{"64:ff9b::a9fe:a9fe", "NAT64"},
		{"::127.0.0.1", "reserved"},
		{"2001:db8::1", ""},
	} {
		a, ok := parseAddr(tc.addr)
		if !ok {
			t.Fatalf("%s: not read as an address", tc.addr)
		}
		if got := g.Closed(a); !strings.HasPrefix(got, tc.why) || (tc.why == "") != (got == "") {
			t.Errorf("Closed(%s) = %q, want %q", tc.addr, got, tc.why)
		}
	}
}

// TestAllowInternalNeverOpensTheHost: egress.allow_internal opens private
// ranges, but never loopback, the host's own addresses, its bridges'
// networks nor the installation's networks within them, for the proxy and
// for allow rules; and a bridge that appeared since the host's interfaces
// were last read is closed at once.
func TestAllowInternalNeverOpensTheHost(t *testing.T) {
	var fresh []bool
	g := NewGuard(GuardConfig{
		AllowInternal: []netip.Prefix{
			netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
			netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24"),
		},
		HostAddrs: func(now bool) []netip.Prefix {
			fresh = append(fresh, now)
			addrs := []netip.Prefix{netip.MustParsePrefix("198.51.100.200/32"), netip.MustParsePrefix("172.17.0.0/16")}
			if now { // a bridge made since the last read
				addrs = append(addrs, netip.MustParsePrefix("172.29.0.0/16"))
			}
			return addrs
		},
	})
	g.AddNetworks(netip.MustParsePrefix("203.0.113.0/28"))
	for _, tc := range []struct{ addr, why string }{
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"198.51.100.200", "the host's own"},
		{"172.17.0.1", "the host's own"},
		{"172.17.0.5", "the host's own"}, // a container on a bridge
		{"172.29.0.5", "the host's own"}, // on the new bridge
		{"203.0.113.5", "one of the installation's networks"},
		{"172.18.0.5", ""},
		{"198.51.100.7", ""},
		{"203.0.113.17", ""},
	} {
		if got := g.Closed(netip.MustParseAddr(tc.addr)); !strings.HasPrefix(got, tc.why) || (tc.why == "") != (got == "") {
			t.Errorf("Closed(%s) = %q, want %q", tc.addr, got, tc.why)
		}
	}
	if !slices.Contains(fresh, true) {
		t.Errorf("an address about to be opened was checked against the interfaces as last read only (fresh: %v)", fresh)
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"127.0.0.1:8080", false},
		{"172.17.0.0/16", false},
		{"172.16.0.0/12", false}, // holds a bridge's network
		{"198.51.100.200", false},
		{"203.0.113.0/28", false},
		{"172.18.0.0/16", true},
		{"198.51.100.7:22", true},
	} {
		pol, err := ParsePolicy([]string{tc.rule}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.CheckPolicy(pol); (err == nil) != tc.ok {
			t.Errorf("CheckPolicy(allow %q) = %v, want ok=%v", tc.rule, err, tc.ok)
		}
	}
}

// TestGuardClosesTheHostsBridges: the networks of the host's real bridges
// (docker0's, where the engine made it) stay closed even where
// egress.allow_internal opens every private range.
func TestGuardClosesTheHostsBridges(t *testing.T) {
	var bridges []netip.Prefix
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifaces {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && isBridge(ifc.Name) && p.Addr().Is4() && p.Bits() < 31 {
				bridges = append(bridges, p)
			}
		}
	}
	if len(bridges) == 0 {
		t.Skip("no bridge with an IPv4 network on this host")
	}
	g := NewGuard(GuardConfig{AllowInternal: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	}})
	for _, p := range bridges {
		// An address on the bridge's network that is not the host's.
		neighbour := p.Masked().Addr().Next()
		if neighbour == p.Addr() {
			neighbour = neighbour.Next()
		}
		if why := g.Closed(neighbour); !strings.HasPrefix(why, "the host's own") {
			t.Errorf("%s, on the host's bridge %s: %q, want closed", neighbour, p, why)
		}
	}
}

// TestGuardReadsANewBridgeAtOnce: a bridge made after the guard read the
// host's interfaces is closed at once, not after the cache expires.
func TestGuardReadsANewBridgeAtOnce(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and ip(8) to make a bridge")
	}
	// 198.18.0.0/15 is for benchmarks: never routed, and opened here.
	k := 1 + time.Now().Nanosecond()%250
	name := fmt.Sprintf("pdkg%d", time.Now().UnixNano()%1e9)
	g := NewGuard(GuardConfig{AllowInternal: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}})
	neighbour := netip.MustParseAddr(fmt.Sprintf("198.18.%d.7", k))
	if why := g.Closed(neighbour); why != "" {
		t.Fatalf("before the bridge: %s is closed (%s)", neighbour, why)
	}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("link", "add", name, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	ip("addr", "add", fmt.Sprintf("198.18.%d.1/24", k), "dev", name)
	if why := g.Closed(neighbour); !strings.HasPrefix(why, "the host's own") {
		t.Fatalf("%s on a bridge made a moment ago: %q, want closed", neighbour, why)
	}
}

func TestGuardReadsTheHostsInterfaces(t *testing.T) {
	g := NewGuard(GuardConfig{})
	if why := g.Closed(netip.MustParseAddr("127.0.0.1")); why != "loopback" {
		t.Fatalf("loopback: %q", why)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		if why := g.Closed(p.Addr()); why == "" {
			t.Errorf("the host's address %s is open", p.Addr())
		}
	}
}

func TestCheckPolicyRefusesInternalAddresses(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"pypi.org", true},
		{"*", true},
		{"*:8080", true},
		{"203.0.113.17", true},
		{"0.0.0.0/0", true},
		{"::/0", true},
		{"10.1.2.0/25", true},      // inside what the installation opened
		{"10.1.2.7:5432", true},    // the same
		{"169.254.10.3:80", true},  // the same
		{"10.1.0.0/16", false},     // wider than what it opened
		{"127.0.0.0/8", false},     // the reproduction
		{"127.0.0.1", false},       //
		{"2130706433", false},      // decimal
		{"2130706433:8080", false}, //
		{"0x7f000001", false},      // hex
		{"0177.0.0.1", false},      // octal
		{"127.1", false},           // short
		{"127.1:8080", false},      //
		{"[::ffff:127.0.0.1]:80", false},
		{"::ffff:127.0.0.0/104", false},
		{"::1", false},
		{"localhost", false},
		{"localhost:8080", false},
		{"LocalHost.", false},
		{"*.localhost", false},
		{"app.localhost", false},
		{"172.17.0.1:8080", false},
		{"169.254.169.254", false},
		{"fe80::/10", false},
		{"fd00::/8", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"198.51.100.200", false}, // the host's own
		{"198.51.100.0/24", false},
		{"203.0.113.0/24", false}, // an installation network within
		{"0.0.0.0/1", false},
		{"127.0.0.1.", false}, // a trailing dot is still the address
		{"2130706433.", false},
		{"0x7f000001.:8080", false},
		{"169.254.169.254.", false},
	} {
		pol, err := ParsePolicy([]string{tc.rule}, []string{tc.rule})
		if err != nil {
			t.Fatalf("ParsePolicy(%q): %v", tc.rule, err)
		}
		err = g.CheckPolicy(pol)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPolicy(allow %q) = %v, want ok=%v", tc.rule, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		if pub, ok := errdefs.Public(err); !ok || pub.Code != CodeInternalAddress || !strings.Contains(pub.Message, fmt.Sprintf("%q", tc.rule)) {
			t.Errorf("CheckPolicy(allow %q): %v, want code %s naming the rule", tc.rule, err, CodeInternalAddress)
		}
	}
	// Deny rules may name anything.
	pol, err := ParsePolicy(nil, []string{"127.0.0.0/8", "localhost", "169.254.169.254"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckPolicy(pol); err != nil {
		t.Fatalf("deny rules: %v", err)
	}
}

// rebinding resolves every name to loopback, as a hostile DNS server
// would.
type rebinding struct{}

func (rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestGuardAppliesAfterTheRules: with rules that allow every address and
// every name on the port, the guard still refuses loopback in every
// encoding, by plain HTTP and CONNECT, and a name that resolves to it,
// while the host map still opens its names.
func TestGuardAppliesAfterTheRules(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "host service") }))
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"0.0.0.0/0", "::/0", "*:" + port}, nil, 443, func(c *Config) { c.Resolver = rebinding{} })
	r.mapHost(port, "registry.test")
	hosts := append(encodings(netip.MustParseAddr("127.0.0.1")), "localhost", "rebound.example", "0", "0.0.0.0")
	for _, host := range hosts {
		authority := net.JoinHostPort(host, port)
		for _, method := range []string{"GET", "CONNECT"} {
			status, hdr := rawProxy(t, r.addr, method, authority)
			if status != http.StatusForbidden || hdr != refusedValue {
				t.Errorf("%s %s: status %d (%s=%q), want the proxy's 403", method, authority, status, headerRefused, hdr)
			}
		}
	}
	if status, _ := rawProxy(t, r.addr, "GET", "registry.test:"+port); status != http.StatusOK {
		t.Fatalf("a name the host map opens: status %d", status)
	}
}

// TestDialerChecksTheSocket: the dial itself refuses a closed address, and
// any address but the one checked.
func TestDialerChecksTheSocket(t *testing.T) {
	r := newRig(t, nil, nil, 443)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ap := netip.MustParseAddrPort(l.Addr().String())
	if _, err := r.proxy.dialer(target{addr: ap}).Dial("tcp", ap.String()); !errors.Is(err, errGuarded) {
		t.Fatalf("dial to loopback: %v, want the guard's refusal", err)
	}
	other := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), ap.Port())
	if _, err := r.proxy.dialer(target{addr: other, opened: true}).Dial("tcp", ap.String()); !errors.Is(err, errGuarded) {
		t.Fatalf("dial to another address than checked: %v, want the guard's refusal", err)
	}
	c, err := r.proxy.dialer(target{addr: ap, opened: true}).Dial("tcp", ap.String())
	if err != nil {
		t.Fatalf("dial to an opened address: %v", err)
	}
	c.Close()
}

// rawProxy sends one request to the proxy as written, with the rig's
// credentials, and returns the status and the refusal header.
func rawProxy(t *testing.T, proxy, method, authority string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	target := authority
	if method != "CONNECT" {
		target = "http://" + authority + "/"
	}
	cred := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPass))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\nConnection: close\r\n\r\n", method, target, authority, cred)
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get(headerRefused)
}

// TestHostMapOpensItsPortsOnly: an egress.hosts entry opens its address
// for its name on its own port (80 and 443 when it names none); rules
// that match the name on another port, or any name on any port, meet
// the guard there, plain and through CONNECT.
func TestHostMapOpensItsPortsOnly(t *testing.T) {
	serve := func(answer string) string {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, answer) }))
		t.Cleanup(up.Close)
		return portOf(t, up.URL)
	}
	mirror, api := serve("the mirror"), serve("the host's API")
	r := newRig(t, []string{"*:" + mirror, "*:" + api, "registry.test:" + api, "web.test:" + api, "*"}, nil, 443)
	r.mapHost(mirror, "registry.test")
	r.proxy.cfg.Hosts["web.test"] = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}
	if status, _ := rawProxy(t, r.addr, "GET", "registry.test:"+mirror); status != http.StatusOK {
		t.Errorf("GET registry.test on its port: %d, want 200", status)
	}
	if line := connectLine(t, r.addr, "registry.test:"+mirror); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("CONNECT registry.test on its port: %q, want 200", line)
	}
	for _, method := range []string{"GET", "CONNECT"} {
		for _, authority := range []string{"registry.test:" + api, "web.test:" + api} {
			if status, hdr := rawProxy(t, r.addr, method, authority); status != http.StatusForbidden || hdr != refusedValue {
				t.Errorf("%s %s: %d (%s=%q), want the proxy's 403", method, authority, status, headerRefused, hdr)
			}
		}
	}
	r.last(6) // all recorded
	r.mu.Lock()
	for _, d := range r.decisions {
		if strconv.Itoa(d.Port) == api && (d.Allowed || !strings.Contains(d.Reason, "loopback")) {
			t.Errorf("%s %s:%d: decision %+v, want a refusal naming loopback", d.Method, d.Host, d.Port, d)
		}
	}
	r.mu.Unlock()
	web := r.proxy.cfg.Hosts["web.test"]
	loop := netip.MustParseAddr("127.0.0.1")
	if !opens(web, loop, 80) || !opens(web, loop, 443) || opens(web, loop, 8080) || opens(web, netip.MustParseAddr("127.0.0.2"), 80) {
		t.Error("an entry without a port opens its address on 80 and 443 only")
	}
}

// connectLine sends a CONNECT with the rig's credentials and returns the
// proxy's status line.
func connectLine(t *testing.T, proxy, authority string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	cred := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPass))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", authority, authority, cred)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	return line
}
