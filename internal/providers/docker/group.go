package docker

import (
	"context"
	"net"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

var _ provider.Grouper = (*Provider)(nil)

// A group's (a world's) network is a bridge of its own, named after the
// group: internal (no route out), inter-container traffic on (its members
// reach each other, by the alias each joins with, through the engine's
// DNS), and, like the egress networks, with a firewall chain that drops
// whatever its bridge sends to the host itself. The engine keeps one
// bridge from another, so one group's members never reach another's. It
// carries the instance's label and the group's, so the reconciler finds
// the networks of groups that are gone.

// CodeGroupsNotSupported: this provider cannot put a group on a private
// network (under gVisor the engine's DNS, which names the members, is not
// reachable from the sandbox).
const CodeGroupsNotSupported = "world_not_supported"

// groupNetwork is the Docker network of group id.
func groupNetwork(id string) string { return "paddock-world-" + id }

// CreateGroup makes group id's network and its firewall chain.
func (p *Provider) CreateGroup(ctx context.Context, id string) error {
	if p.gvisor() {
		return errdefs.FailedPrecondition(CodeGroupsNotSupported, "provider %s runs gVisor, where a world's members cannot name each other: use a runc provider for worlds", p.Name())
	}
	if !provider.ValidName(id, 64) {
		return errdefs.InvalidArgument(provider.CodeInvalidSpec, "group id %q is not valid", id)
	}
	name := groupNetwork(id)
	bridge := bridgeName(name)
	_, err := p.cli.NetworkCreate(ctx, name, network.CreateOptions{
		Driver:   "bridge",
		Internal: true,
		Options:  map[string]string{"com.docker.network.bridge.name": bridge},
		Labels:   map[string]string{provider.LabelManaged: "true", provider.LabelInstance: p.cfg.Instance, provider.LabelGroup: id},
	})
	if err != nil && !cerrdefs.IsConflict(err) {
		return networkCreateErr(name, err)
	}
	if err := p.groupFirewall(bridge); err != nil {
		if rerr := p.RemoveGroup(context.WithoutCancel(ctx), id); rerr != nil {
			p.logger.WarnContext(ctx, "removing a world's network after its firewall failed", "network", name, "err", rerr)
		}
		return err
	}
	return nil
}

// groupFirewall drops what bridge sends to the host. Rules that name a
// bridge outside paddock's network namespace would hold nothing back: then
// the group is refused.
func (p *Provider) groupFirewall(bridge string) error {
	if _, err := net.InterfaceByName(bridge); err != nil {
		return errdefs.FailedPrecondition("firewall_unavailable",
			"the world's bridge %s is not in paddock's network namespace (paddock must run in the Docker engine's to keep a world's members from the host)", bridge).WithCause(err)
	}
	unlock, err := p.firewallLock()
	if err != nil {
		return errdefs.FailedPrecondition(CodeFirewallFailed, "paddock could not keep a world's members from the host").WithCause(err)
	}
	defer unlock()
	if err := bridgeChain(bridge); err != nil {
		return errdefs.FailedPrecondition(CodeFirewallFailed, "paddock could not keep a world's members from the host").WithCause(err)
	}
	return nil
}

// RemoveGroup removes group id's network and its firewall chain. A
// network of that name another installation made is left alone.
func (p *Provider) RemoveGroup(ctx context.Context, id string) error {
	name := groupNetwork(id)
	insp, err := p.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return engineErr("inspect network "+name+" for", err)
	}
	if insp.Labels[provider.LabelInstance] != p.cfg.Instance || insp.Labels[provider.LabelGroup] != id {
		return nil
	}
	if err := p.cli.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
		return engineErr("remove network "+name+" for", err)
	}
	unlock, err := p.firewallLock()
	if err == nil {
		defer unlock()
	}
	RemoveFirewall(bridgeName(name))
	return nil
}

// Groups lists the ids of this installation's group networks.
func (p *Provider) Groups(ctx context.Context) ([]string, error) {
	ns, err := p.cli.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", provider.LabelInstance+"="+p.cfg.Instance), filters.Arg("label", provider.LabelGroup))})
	if err != nil {
		return nil, engineErr("list the networks of", err)
	}
	var ids []string
	for _, n := range ns {
		if id := n.Labels[provider.LabelGroup]; id != "" && n.Name == groupNetwork(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// groupEndpoint is how a member of spec's group joins its network: by its
// member name, which the others resolve.
func groupEndpoint(spec provider.Spec) *network.NetworkingConfig {
	if spec.Group == "" {
		return nil
	}
	return &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		groupNetwork(spec.Group): {Aliases: []string{spec.GroupName}},
	}}
}
