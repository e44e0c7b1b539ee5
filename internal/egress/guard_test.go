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
		HostAddrs:     func() []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("198.51.100.200/32")} },
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
