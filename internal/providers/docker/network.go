package docker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Networks configure the proxy and open egress modes. Sandboxes in proxy
// mode sit on an internal network (no route out) whose only reachable
// address is the egress proxy on the network's gateway; sandboxes in open
// mode sit on an ordinary bridge. On both, containers cannot reach each
// other (inter-container traffic is off), and a firewall rule drops every
// packet from the bridge to the host itself, except, on the proxy network,
// those to the proxy: without it a sandbox reaches every service listening
// on the host, through the gateway address or any other of the host's. In
// open mode the metadata range (169.254.0.0/16) is dropped too.
//
// The networks belong to one installation: each carries its instance
// label, and a network of that name carrying another installation's label
// is refused, never joined. Each bridge's INPUT rules live in a chain of
// their own (FirewallChain), reached from INPUT by one jump that names the
// bridge: the proxy's ACCEPTs (one per proxy port, for servers of one
// installation that listen on several) always sit above the chain's one
// DROP, so no server's rules cut another's sandboxes off.
type Networks struct {
	// Proxy and Open name the two Docker networks; each is created if
	// missing.
	Proxy, Open string
	// ProxyPort is the port the egress proxy listens on at the proxy
	// network's gateway.
	ProxyPort int
	// Earlier, when set, names the networks an earlier release made for
	// every installation (paddock-egress and paddock-open): if the proxy
	// network of that name exists and carries this installation's label,
	// both are used instead of Proxy and Open, so an upgraded
	// installation keeps its sandboxes on the networks they are on.
	Earlier *Networks

	gw netip.Addr // the proxy network's gateway, once set up
}

// bridgeName is the Linux bridge of a paddock network: named after the
// network, so the firewall rules can name it before Docker says it.
func bridgeName(netName string) string {
	sum := sha256.Sum256([]byte(netName))
	return "pdk" + hex.EncodeToString(sum[:])[:12] // 15 bytes: the kernel's limit
}

// FirewallChain is the iptables chain (table filter) that holds the INPUT
// rules of a paddock bridge.
func FirewallChain(bridge string) string { return "PADDOCK-" + bridge }

// CodeNetworkForeign: a network of the configured name belongs to another
// installation.
const CodeNetworkForeign = "network_foreign"

// SetupNetworks creates the egress networks and their firewall rules, and
// returns the address the egress proxy must listen on; the proxy's ACCEPT
// comes with AllowProxy, once the proxy listens. It is idempotent: the
// server calls it at every start, and it removes the ACCEPTs of proxies
// that no longer listen.
func (p *Provider) SetupNetworks(ctx context.Context) (netip.AddrPort, error) {
	n, err := p.networkNames(ctx)
	if err != nil {
		return netip.AddrPort{}, err
	}
	gw, err := p.ensureNetwork(ctx, n.Proxy, true)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if _, err := p.ensureNetwork(ctx, n.Open, false); err != nil {
		return netip.AddrPort{}, err
	}
	if err := installFirewall(bridgeName(n.Proxy), bridgeName(n.Open)); err != nil {
		return netip.AddrPort{}, err
	}
	if err := p.pruneAccepts(FirewallChain(bridgeName(n.Proxy)), gw); err != nil {
		return netip.AddrPort{}, errdefs.FailedPrecondition(CodeFirewallFailed, "paddock could not remove stale proxy ACCEPTs").WithCause(err)
	}
	n.gw = gw
	p.nets.Store(&n)
	return netip.AddrPortFrom(gw, uint16(n.ProxyPort)), nil
}

// networkNames are the configured networks, or the earlier release's if
// this installation has them.
func (p *Provider) networkNames(ctx context.Context) (Networks, error) {
	n := p.cfg.Networks
	if n == nil {
		return Networks{}, errdefs.FailedPrecondition(CodeNetworkNotSupported, "the docker provider has no egress networks configured")
	}
	if e := n.Earlier; e != nil {
		insp, err := p.cli.NetworkInspect(ctx, e.Proxy, network.InspectOptions{})
		if err == nil && insp.Labels[provider.LabelInstance] == p.cfg.Instance {
			return Networks{Proxy: e.Proxy, Open: e.Open, ProxyPort: n.ProxyPort}, nil
		}
		if err != nil && !cerrdefs.IsNotFound(err) {
			return Networks{}, engineErr("inspect network "+e.Proxy+" for", err)
		}
	}
	return Networks{Proxy: n.Proxy, Open: n.Open, ProxyPort: n.ProxyPort}, nil
}

// ensureNetwork creates a paddock network unless it exists, and returns
// its IPv4 gateway.
func (p *Provider) ensureNetwork(ctx context.Context, name string, internal bool) (netip.Addr, error) {
	insp, err := p.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if cerrdefs.IsNotFound(err) {
		_, err = p.cli.NetworkCreate(ctx, name, network.CreateOptions{
			Driver:   "bridge",
			Internal: internal,
			Options: map[string]string{
				"com.docker.network.bridge.name":       bridgeName(name),
				"com.docker.network.bridge.enable_icc": "false",
			},
			Labels: map[string]string{provider.LabelManaged: "true", provider.LabelInstance: p.cfg.Instance},
		})
		if err != nil && !cerrdefs.IsConflict(err) {
			return netip.Addr{}, networkCreateErr(name, err)
		}
		insp, err = p.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	}
	if err != nil {
		return netip.Addr{}, engineErr("inspect network "+name+" for", err)
	}
	if owner, ok := insp.Labels[provider.LabelInstance]; ok && owner != p.cfg.Instance {
		return netip.Addr{}, errdefs.FailedPrecondition(CodeNetworkForeign,
			"Docker network %q belongs to another paddock installation (instance %q, this one is %q): give this one networks of its own with egress.proxy_network and egress.open_network (PADDOCK_EGRESS_PROXY_NETWORK, PADDOCK_EGRESS_OPEN_NETWORK), or leave them unset for names derived from the instance id",
			name, owner, p.cfg.Instance)
	}
	if insp.Internal != internal || insp.Options["com.docker.network.bridge.enable_icc"] != "false" ||
		insp.Options["com.docker.network.bridge.name"] != bridgeName(name) {
		return netip.Addr{}, errdefs.FailedPrecondition("network_misconfigured",
			"Docker network %q exists but is not one paddock made (internal=%v, icc off, bridge %s); remove it or name another", name, internal, bridgeName(name))
	}
	for _, c := range insp.IPAM.Config {
		if a, err := netip.ParseAddr(c.Gateway); err == nil && a.Is4() {
			return a, nil
		}
	}
	return netip.Addr{}, errdefs.FailedPrecondition("network_misconfigured", "Docker network %q has no IPv4 gateway", name)
}

// RemoveNetworks removes the egress networks and the firewall rules (tests
// and uninstalls; a running server keeps them).
func (p *Provider) RemoveNetworks(ctx context.Context) error {
	if p.cfg.Networks == nil {
		return nil
	}
	n, err := p.networkNames(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range []string{n.Proxy, n.Open} {
		if err := p.cli.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, engineErr("remove network "+name+" for", err))
		}
		RemoveFirewall(bridgeName(name))
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// iptables runs one iptables command.
func iptables(args ...string) error {
	cmd := exec.Command("iptables", append([]string{"-w"}, args...)...)
	var out bytes.Buffer
	cmd.Stderr, cmd.Stdout = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// rulesOf lists chain's rules as iptables -S prints them, without the
// policy line.
func rulesOf(chain string) ([]string, error) {
	out, err := exec.Command("iptables", "-w", "-S", chain).Output()
	if err != nil {
		return nil, fmt.Errorf("iptables -S %s: %w", chain, err)
	}
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "-A "+chain+" ") {
			rules = append(rules, line)
		}
	}
	return rules, nil
}

// ensureRule adds a rule at the top of chain unless it is there.
func ensureRule(table, chain string, rule ...string) error {
	if iptables(append([]string{"-t", table, "-C", chain}, rule...)...) == nil {
		return nil
	}
	return iptables(append([]string{"-t", table, "-I", chain}, rule...)...)
}

// CodeFirewallFailed: iptables runs, but a rule that keeps sandboxes away
// from the host could not be put in place. The server does not start.
const CodeFirewallFailed = "firewall_failed"

// metadataDrop is the rule (table raw, chain PREROUTING) that drops what
// an open bridge sends to the link-local range, cloud metadata among it.
// It sits in raw PREROUTING, before routing, where Docker never writes:
// Docker deletes and inserts again FORWARD's jump to DOCKER-USER each time
// it creates a network, and in that gap FORWARD accepts whatever a bridge
// sends out, so a rule in DOCKER-USER (where an earlier release kept this
// one) let a sandbox through now and then.
func metadataDrop(openBridge string) []string {
	return []string{"-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP"}
}

// installFirewall drops what the bridges send to the host, and what the
// open bridge sends to the metadata range. Each bridge's INPUT rules sit in
// its own chain, jumped to from the top of INPUT, ahead of anything that
// would accept the traffic; the metadata rule sits at the top of raw
// PREROUTING (see metadataDrop). The proxy's ACCEPT is added by
// AllowProxy, once the proxy listens. Without iptables (or root) it fails
// with firewall_unavailable, and the proxy and open modes are not offered;
// when iptables runs but a rule cannot be added it fails with
// firewall_failed.
func installFirewall(proxyBridge, openBridge string) error {
	if _, err := rulesOf("INPUT"); err != nil {
		return errdefs.FailedPrecondition("firewall_unavailable",
			"paddock cannot install the firewall rules that keep sandboxes away from the host's services (it needs root and iptables)").WithCause(err)
	}
	fail := func(err error) error {
		return errdefs.FailedPrecondition(CodeFirewallFailed,
			"paddock could not install the firewall rules that keep sandboxes away from the host's services").WithCause(err)
	}
	for _, bridge := range []string{proxyBridge, openBridge} {
		// Rules name the bridges; in another network namespace than the
		// engine's they would be in place and hold nothing back.
		if _, err := net.InterfaceByName(bridge); err != nil {
			return fail(fmt.Errorf("bridge %s is not in paddock's network namespace (paddock must run in the Docker engine's): %w", bridge, err))
		}
		if err := bridgeChain(bridge); err != nil {
			return fail(err)
		}
	}
	if err := ensureRule("raw", "PREROUTING", metadataDrop(openBridge)...); err != nil {
		return fail(err)
	}
	// The earlier release's copy in DOCKER-USER goes once this one holds.
	deleteAll("filter", "DOCKER-USER", metadataDrop(openBridge))
	return nil
}

// deleteAll deletes every copy of rule from table's chain.
func deleteAll(table, chain string, rule []string) {
	for iptables(append([]string{"-t", table, "-D", chain}, rule...)...) == nil {
	}
}

// bridgeChain makes bridge's chain end in a DROP and jumps to it from the
// top of INPUT; only then do the rules an earlier release put in INPUT
// itself for the bridge go, so the bridge is never without a DROP. An
// ACCEPT is only ever inserted at the chain's top and the DROP only
// appended, so the ACCEPTs of every server that shares the bridge stay
// above the DROP.
func bridgeChain(bridge string) error {
	chain := FirewallChain(bridge)
	if iptables("-S", chain) != nil {
		if err := iptables("-N", chain); err != nil && iptables("-S", chain) != nil {
			return err
		}
	}
	if iptables("-C", chain, "-j", "DROP") != nil {
		if err := iptables("-A", chain, "-j", "DROP"); err != nil {
			return err
		}
	}
	if err := jumpFirst(bridge, chain); err != nil {
		return err
	}
	return deleteRules("INPUT", func(rule string) bool {
		return earlierRule.MatchString(rule) && strings.Contains(rule, " -i "+bridge+" ")
	})
}

// earlierRule is a rule an earlier release put in INPUT for a bridge:
// its DROP, or its ACCEPT of the proxy port on the gateway. Only these
// exact shapes are removed; an operator's own rules naming the bridge
// stay.
var earlierRule = regexp.MustCompile(`^-A INPUT (-i pdk[0-9a-f]{12} -j DROP|-d [0-9.]+/32 -i pdk[0-9a-f]{12} -p tcp -m tcp --dport [0-9]+ -j ACCEPT)$`)

// paddockJump is a jump from INPUT to a paddock bridge's chain.
var paddockJump = regexp.MustCompile(`^-A INPUT -i (pdk[0-9a-f]{12}) -j PADDOCK-pdk[0-9a-f]{12}$`)

// jumpFirst makes INPUT jump to chain for bridge above every rule but
// other paddock jumps (those of the other bridges, which must be on top
// too). A jump found lower, below a rule that could accept the traffic,
// is inserted again at the top and the lower copies deleted.
func jumpFirst(bridge, chain string) error {
	jump := "-A INPUT -i " + bridge + " -j " + chain
	rules, err := rulesOf("INPUT")
	if err != nil {
		return err
	}
	for _, r := range rules {
		if r == jump {
			return nil
		}
		if !paddockJump.MatchString(r) {
			break
		}
	}
	if err := iptables("-I", "INPUT", "1", "-i", bridge, "-j", chain); err != nil {
		return err
	}
	rules, err = rulesOf("INPUT")
	if err != nil {
		return err
	}
	// The lower copies go by number (a delete by rule would take the top
	// one), each read again just before: another program may be changing
	// INPUT meanwhile.
	for i := len(rules) - 1; i > 0; i-- { // rule 1 is the one just inserted
		if rules[i] != jump {
			continue
		}
		n := strconv.Itoa(i + 1)
		if out, err := exec.Command("iptables", "-w", "-S", "INPUT", n).Output(); err != nil || strings.TrimSpace(string(out)) != jump {
			continue // moved meanwhile: the next setup sees it again
		}
		if err := iptables("-D", "INPUT", n); err != nil {
			return err
		}
	}
	return nil
}

// deleteRules deletes the rules of chain (as iptables -S prints them) that
// match.
func deleteRules(chain string, match func(rule string) bool) error {
	rules, err := rulesOf(chain)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if match(r) {
			if err := iptables(append([]string{"-D"}, strings.Fields(r)[1:]...)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// proxyAccept is the rule that lets a proxy bridge reach the proxy port on
// its gateway.
func proxyAccept(gw netip.Addr, port int) []string {
	return []string{"-d", gw.String() + "/32", "-p", "tcp", "-m", "tcp", "--dport", strconv.Itoa(port), "-j", "ACCEPT"}
}

// AllowProxy lets the proxy network's sandboxes reach the proxy port on
// its gateway: the server calls it once its proxy listens there, and the
// returned revoke once its proxy no longer listens or its start failed,
// so no ACCEPT outlives the proxies it was for (another program on that
// port would otherwise be reachable from the sandboxes). Replicas of the
// installation on one host listen on one port together (SO_REUSEPORT):
// revoke keeps the ACCEPT while another of them still listens there.
// Without networks it does nothing.
func (p *Provider) AllowProxy(ctx context.Context) (revoke func(), err error) {
	n := p.nets.Load()
	if n == nil {
		return func() {}, nil
	}
	unlock, err := p.firewallLock()
	if err != nil {
		return nil, errdefs.FailedPrecondition(CodeFirewallFailed, "paddock could not let the proxy network reach the egress proxy").WithCause(err)
	}
	defer unlock()
	chain, accept := FirewallChain(bridgeName(n.Proxy)), proxyAccept(n.gw, n.ProxyPort)
	if iptables(append([]string{"-C", chain}, accept...)...) != nil {
		if err := iptables(append([]string{"-I", chain, "1"}, accept...)...); err != nil {
			return nil, errdefs.FailedPrecondition(CodeFirewallFailed, "paddock could not let the proxy network reach the egress proxy").WithCause(err)
		}
	}
	return func() { p.revokeProxy(chain, n.gw, n.ProxyPort) }, nil
}

// revokeProxy deletes the ACCEPT of the proxy port unless a proxy still
// listens on it at the gateway (another replica's).
func (p *Provider) revokeProxy(chain string, gw netip.Addr, port int) {
	unlock, err := p.firewallLock()
	if err != nil {
		p.logger.Warn("egress proxy ACCEPT kept: the firewall lock failed", "err", err)
		return
	}
	defer unlock()
	if listening, err := listenersOn(gw); err != nil || listening[port] {
		return
	}
	for iptables(append([]string{"-D", chain}, proxyAccept(gw, port)...)...) == nil {
	}
}

// pruneAccepts deletes the proxy chain's ACCEPTs whose port nothing
// listens on at the gateway: those of servers that crashed, or ran with
// another proxy_port. Another server of the installation sharing the
// network listens on its port, on the gateway address itself, and keeps
// its ACCEPT; a program that listens on all addresses does not count.
func (p *Provider) pruneAccepts(chain string, gw netip.Addr) error {
	unlock, err := p.firewallLock()
	if err != nil {
		return err
	}
	defer unlock()
	listening, err := listenersOn(gw)
	if err != nil {
		return err
	}
	return deleteRules(chain, func(rule string) bool {
		f := strings.Fields(rule)
		if len(f) != 12 || f[11] != "ACCEPT" || f[8] != "--dport" || f[3] != gw.String()+"/32" {
			return false
		}
		port, err := strconv.Atoi(f[9])
		return err == nil && !listening[port]
	})
}

// listenersOn reads the TCP ports that sockets of the host's network
// namespace listen on at addr itself (/proc/net/tcp).
func listenersOn(addr netip.Addr) (map[int]bool, error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	ports := map[int]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" { // 0A: LISTEN
			continue
		}
		hostHex, portHex, ok := strings.Cut(f[1], ":")
		raw, err1 := strconv.ParseUint(hostHex, 16, 32)
		port, err2 := strconv.ParseUint(portHex, 16, 16)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		var ip [4]byte
		binary.NativeEndian.PutUint32(ip[:], uint32(raw)) // the kernel prints the address in host order
		if netip.AddrFrom4(ip) == addr {
			ports[int(port)] = true
		}
	}
	return ports, nil
}

// RemoveFirewall deletes the jumps to bridge's chain and its metadata
// rule (and an earlier release's, in DOCKER-USER), and the chain.
func RemoveFirewall(bridge string) {
	chain := FirewallChain(bridge)
	_ = deleteRules("INPUT", func(rule string) bool { return rule == "-A INPUT -i "+bridge+" -j "+chain })
	deleteAll("raw", "PREROUTING", metadataDrop(bridge))
	_ = deleteRules("DOCKER-USER", func(rule string) bool { return strings.Contains(rule, " -i "+bridge+" ") })
	if iptables("-F", chain) == nil {
		_ = iptables("-X", chain)
	}
}

// networkMode is the Docker network a sandbox in policy n joins.
func (p *Provider) networkMode(n provider.NetworkPolicy) string {
	nets := p.nets.Load()
	switch {
	case nets == nil:
	case n == provider.NetworkProxy:
		return nets.Proxy
	case n == provider.NetworkOpen:
		return nets.Open
	}
	return "none"
}

// offeredNetworks: none always; proxy and open once SetupNetworks made the
// networks and their firewall rules. Under gVisor too: its network stack
// runs in the sandbox, but its packets still leave through the container's
// veth onto the bridge, so the host's rules (raw PREROUTING, INPUT, icc off)
// apply to them as to runc's. What gVisor bypasses is the container's own
// namespace's rules, and with them Docker's embedded DNS (see resolvConf).
func (p *Provider) offeredNetworks() []provider.NetworkPolicy {
	if p.nets.Load() == nil {
		return []provider.NetworkPolicy{provider.NetworkNone}
	}
	return []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}
}
