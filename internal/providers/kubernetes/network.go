package kubernetes

import (
	"context"
	"errors"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// MetadataRange is the link-local range where clouds answer metadata
// requests (169.254.169.254): the open mode's egress excludes it.
var MetadataRange = netip.MustParsePrefix("169.254.0.0/16")

// policyFor is the NetworkPolicy of a sandbox in network mode mode,
// selecting its Pod by its sandbox label. Every mode admits ingress only to
// the agent's port, and only from Config.AgentFrom (from anywhere when it
// is empty: the agent link's pinned TLS then keeps others out). Egress:
//
//   - none: nothing;
//   - proxy: the egress proxy's address and port only;
//   - open: anywhere over IPv4 but the addresses openClosed lists (IPv6
//     is not opened).
//
// Only a network plugin that enforces NetworkPolicy makes this hold
// (Config.NetworkPolicies); without one only open is offered.
func (p *Provider) policyFor(mode provider.NetworkPolicy, name, sandboxID string, labels map[string]string) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	agentPort := intstr.FromInt32(AgentPort)
	ingress := networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &agentPort}},
	}
	for _, from := range p.cfg.AgentFrom {
		ingress.From = append(ingress.From, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: from.Masked().String()}})
	}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName(name), Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				provider.LabelManaged: "true",
				provider.LabelSandbox: sandboxID,
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{ingress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{},
		},
	}
	switch mode {
	case provider.NetworkProxy:
		port := intstr.FromInt32(int32(p.cfg.ProxyAddr.Port()))
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: netip.PrefixFrom(p.cfg.ProxyAddr.Addr(), 32).String()}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
		}}
	case provider.NetworkOpen:
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
			To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: p.openClosed()}}},
		}}
	}
	return np
}

// openClosed are the IPv4 blocks an open sandbox never reaches: the
// metadata range, paddock's own addresses (those it dials agents from,
// and the egress proxy's) and Config.DenyCIDRs (the API server, the nodes,
// the services, as the operator names them).
func (p *Provider) openClosed() []string {
	out := []string{MetadataRange.String()}
	seen := map[netip.Prefix]bool{MetadataRange: true}
	add := func(pfx netip.Prefix) {
		pfx = pfx.Masked()
		if pfx.Addr().Is4() && pfx.Bits() > 0 && !seen[pfx] && !MetadataRange.Contains(pfx.Addr()) {
			seen[pfx] = true
			out = append(out, pfx.String())
		}
	}
	for _, pfx := range append(slices.Clone(p.cfg.AgentFrom), p.cfg.DenyCIDRs...) {
		add(pfx)
	}
	if p.cfg.ProxyAddr.IsValid() {
		add(netip.PrefixFrom(p.cfg.ProxyAddr.Addr(), 32))
	}
	return out
}

// SetupNetworks returns where the egress proxy must listen: Config.ProxyAddr
// (an address of the host paddock runs on that the Pods reach), or no
// address when the provider has none. There is nothing to create: each
// sandbox's NetworkPolicy is made with it.
func (p *Provider) SetupNetworks(context.Context) (netip.AddrPort, error) {
	if !p.cfg.ProxyAddr.IsValid() || !p.cfg.NetworkPolicies {
		return netip.AddrPort{}, nil
	}
	return p.cfg.ProxyAddr, nil
}

// AllowProxy has nothing to open: a proxy sandbox's NetworkPolicy admits
// the proxy's address from the start. Its revoke does nothing.
func (p *Provider) AllowProxy(context.Context) (func(), error) { return func() {}, nil }

// NetworkSubnets are the cluster's Pod networks (Config.PodCIDRs, else the
// nodes' spec.podCIDRs): the egress proxy refuses to reach them, so no
// sandbox uses it to reach another.
func (p *Provider) NetworkSubnets(ctx context.Context) ([]netip.Prefix, error) {
	if len(p.cfg.PodCIDRs) > 0 {
		return p.cfg.PodCIDRs, nil
	}
	unknown := func(err error) error {
		return errdefs.FailedPrecondition(CodePodCIDRsUnknown,
			"the kubernetes provider cannot read the nodes' Pod networks; give them in its configuration (pod_cidrs)").WithCause(err)
	}
	nodes, err := p.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, unknown(err)
	}
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, n := range nodes.Items {
		for _, c := range append([]string{n.Spec.PodCIDR}, n.Spec.PodCIDRs...) {
			if pfx, err := netip.ParsePrefix(c); err == nil && !seen[pfx.Masked()] {
				seen[pfx.Masked()] = true
				out = append(out, pfx.Masked())
			}
		}
	}
	if len(out) == 0 {
		return nil, unknown(errors.New("no node has spec.podCIDRs"))
	}
	return out, nil
}

// CodePodCIDRsUnknown: the cluster's Pod networks are neither configured
// nor on its nodes.
const CodePodCIDRsUnknown = "pod_cidrs_unknown"

// SandboxAddrs returns the addresses of h's Pod, those it sends from: the
// egress proxy binds the sandbox's credentials to them.
func (p *Provider) SandboxAddrs(ctx context.Context, h provider.Handle) ([]netip.Addr, error) {
	st, err := p.decodeHandle(h)
	if err != nil {
		return nil, err
	}
	pod, err := p.cached(ctx, st)
	if err != nil {
		return nil, err
	}
	return podAddrs(pod), nil
}

// podAddrs are a Pod's IP addresses.
func podAddrs(pod *corev1.Pod) []netip.Addr {
	var out []netip.Addr
	for _, ip := range pod.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			out = append(out, a.Unmap())
		}
	}
	if len(out) == 0 && pod.Status.PodIP != "" {
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}
