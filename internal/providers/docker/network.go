package docker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os/exec"
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
type Networks struct {
	// Proxy and Open name the two Docker networks; each is created if
	// missing.
	Proxy, Open string
	// ProxyPort is the port the egress proxy listens on at the proxy
	// network's gateway.
	ProxyPort int
}

// bridgeName is the Linux bridge of a paddock network: named after the
// network, so the firewall rules can name it before Docker says it.
func bridgeName(netName string) string {
	sum := sha256.Sum256([]byte(netName))
	return "pdk" + hex.EncodeToString(sum[:])[:12] // 15 bytes: the kernel's limit
}

// SetupNetworks creates the egress networks and their firewall rules, and
// returns the address the egress proxy must listen on. It is idempotent:
// the server calls it at every start.
func (p *Provider) SetupNetworks(ctx context.Context) (netip.AddrPort, error) {
	n := p.cfg.Networks
	if n == nil {
		return netip.AddrPort{}, errdefs.FailedPrecondition(CodeNetworkNotSupported, "the docker provider has no egress networks configured")
	}
	gw, err := p.ensureNetwork(ctx, n.Proxy, true)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if _, err := p.ensureNetwork(ctx, n.Open, false); err != nil {
		return netip.AddrPort{}, err
	}
	if err := installFirewall(bridgeName(n.Proxy), bridgeName(n.Open), gw, n.ProxyPort); err != nil {
		return netip.AddrPort{}, err
	}
	p.netReady.Store(true)
	return netip.AddrPortFrom(gw, uint16(n.ProxyPort)), nil
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
			return netip.Addr{}, engineErr("create network "+name+" for", err)
		}
		insp, err = p.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	}
	if err != nil {
		return netip.Addr{}, engineErr("inspect network "+name+" for", err)
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
	n := p.cfg.Networks
	if n == nil {
		return nil
	}
	var errs []error
	for _, name := range []string{n.Proxy, n.Open} {
		if err := p.cli.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, engineErr("remove network "+name+" for", err))
		}
		removeFirewall(bridgeName(name))
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

// ensureRule adds a rule at the top of chain unless it is there.
func ensureRule(table, chain string, rule ...string) error {
	if iptables(append([]string{"-t", table, "-C", chain}, rule...)...) == nil {
		return nil
	}
	return iptables(append([]string{"-t", table, "-I", chain}, rule...)...)
}

// installFirewall drops what the bridges send to the host, but for the
// proxy, and what the open bridge sends to the metadata range. The rules
// sit at the top of INPUT and DOCKER-USER, ahead of anything that would
// accept the traffic.
func installFirewall(proxyBridge, openBridge string, gw netip.Addr, port int) error {
	fail := func(err error) error {
		return errdefs.FailedPrecondition("firewall_unavailable",
			"paddock cannot install the firewall rules that keep sandboxes away from the host's services (it needs root and iptables)").WithCause(err)
	}
	drop := []string{"-i", proxyBridge, "-j", "DROP"}
	accept := []string{"-i", proxyBridge, "-d", gw.String(), "-p", "tcp", "--dport", strconv.Itoa(port), "-j", "ACCEPT"}
	if !inOrder(proxyBridge, accept, drop) {
		// Both at the top, the ACCEPT first; older copies below them are
		// harmless and go with removeFirewall.
		for _, r := range [][]string{drop, accept} {
			if err := iptables(append([]string{"-I", "INPUT"}, r...)...); err != nil {
				return fail(err)
			}
		}
	}
	if err := ensureRule("filter", "INPUT", "-i", openBridge, "-j", "DROP"); err != nil {
		return fail(err)
	}
	// DOCKER-USER exists once Docker has started with iptables enabled.
	if err := ensureRule("filter", "DOCKER-USER", "-i", openBridge, "-d", "169.254.0.0/16", "-j", "DROP"); err != nil {
		return fail(err)
	}
	return nil
}

// inOrder reports whether INPUT holds an ACCEPT from bridge before a DROP
// from it, both present (-C).
func inOrder(bridge string, accept, drop []string) bool {
	for _, r := range [][]string{accept, drop} {
		if iptables(append([]string{"-C", "INPUT"}, r...)...) != nil {
			return false
		}
	}
	out, err := exec.Command("iptables", "-w", "-S", "INPUT").Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, " -i "+bridge+" ") {
			continue
		}
		// The first rule naming the bridge decides.
		return strings.HasSuffix(line, "-j ACCEPT")
	}
	return false
}

// removeFirewall deletes every rule that names bridge.
func removeFirewall(bridge string) {
	for _, chain := range []string{"INPUT", "DOCKER-USER"} {
		out, err := exec.Command("iptables", "-w", "-S", chain).Output()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "-A "+chain+" ") || !strings.Contains(line, " -i "+bridge+" ") {
				continue
			}
			_ = iptables(append([]string{"-D"}, strings.Fields(line)[1:]...)...)
		}
	}
}

// networkMode is the Docker network a sandbox in policy n joins.
func (p *Provider) networkMode(n provider.NetworkPolicy) string {
	switch n {
	case provider.NetworkProxy:
		return p.cfg.Networks.Proxy
	case provider.NetworkOpen:
		return p.cfg.Networks.Open
	}
	return "none"
}

// offeredNetworks: none always; proxy and open once SetupNetworks made the
// networks and their firewall rules. Under gVisor too: its network stack
// runs in the sandbox, but its packets still leave through the container's
// veth onto the bridge, so the host's rules (INPUT, DOCKER-USER, icc off)
// apply to them as to runc's. What gVisor bypasses is the container's own
// namespace's rules, and with them Docker's embedded DNS (see resolvConf).
func (p *Provider) offeredNetworks() []provider.NetworkPolicy {
	if p.cfg.Networks == nil || !p.netReady.Load() {
		return []provider.NetworkPolicy{provider.NetworkNone}
	}
	return []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}
}
