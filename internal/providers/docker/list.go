package docker

import (
	"cmp"
	"context"
	"maps"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// List returns every container paddock manages for instance, running or
// not, oldest first.
func (p *Provider) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	if instance == "" {
		return nil, errdefs.InvalidArgument("instance_required", "an installation id (instance) is required")
	}
	cs, err := p.cli.ContainerList(ctx, container.ListOptions{
		All: true,
		Filters: filters.NewArgs(
			filters.Arg("label", provider.LabelManaged+"=true"),
			filters.Arg("label", provider.LabelInstance+"="+instance),
		),
	})
	if err != nil {
		return nil, engineErr("list", err)
	}
	slices.SortFunc(cs, func(a, b container.Summary) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), cmp.Compare(a.ID, b.ID))
	})
	out := make([]provider.Listed, 0, len(cs))
	for _, c := range cs {
		if !p.owns(c.Labels) {
			continue
		}
		st := handleState{V: stateVersion, Container: c.ID}
		if len(c.Names) > 0 {
			st.Name = trimSlash(c.Names[0])
		}
		for _, m := range c.Mounts {
			if m.Destination == runTarget {
				st.SocketDir = m.Source
			}
		}
		out = append(out, provider.Listed{
			Handle: provider.Handle{Provider: p.Name(), ID: c.ID, State: st.encode()},
			Labels: maps.Clone(c.Labels),
			Status: summaryStatus(c),
		})
	}
	return out, nil
}

// owns reports whether a container carrying labels was made by this
// provider and not by another on the same engine. Containers made before
// compute carried its provider's name belong to the one named "docker".
func (p *Provider) owns(labels map[string]string) bool {
	name, ok := labels[provider.LabelProvider]
	if !ok {
		return p.Name() == Name
	}
	return name == p.Name()
}

// summaryStatus maps a list entry's state. The list does not carry start
// times or exit codes; Inspect does.
func summaryStatus(c container.Summary) provider.Status {
	switch c.State {
	case container.StateRunning, container.StateRestarting:
		return provider.Status{State: provider.StateRunning}
	case container.StatePaused:
		return provider.Status{State: provider.StatePaused}
	}
	return provider.Status{State: provider.StateStopped}
}

func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}

// RemoveWorkspace removes a workspace volume and its disk (its loop
// device goes with the last mount of its filesystem). A volume that does
// not exist is not an error, and its disk, if one is left (the volume was
// pruned, or an earlier removal stopped halfway), is removed; one still
// mounted by a container (running or not) is a conflict; one paddock does
// not manage is refused.
func (p *Provider) RemoveWorkspace(ctx context.Context, name string) error {
	if !validName(name, 255) || len(name) < 2 {
		return errdefs.InvalidArgument(CodeInvalidSpec, "workspace volume name %q is not valid", name)
	}
	v, err := p.cli.VolumeInspect(ctx, name)
	switch {
	case cerrdefs.IsNotFound(err):
		p.removeDisk(ctx, name)
		return nil
	case err != nil:
		return engineErr("inspect the workspace of", err)
	case v.Labels[provider.LabelManaged] != "true":
		return errdefs.FailedPrecondition(CodeWorkspaceForeign, "volume %q is not a paddock workspace", name)
	}
	err = p.cli.VolumeRemove(ctx, name, false)
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		if v.Labels[LabelDiskMB] != "" {
			p.removeDisk(ctx, name)
		}
		return nil
	case cerrdefs.IsConflict(err):
		return errdefs.Conflict(CodeWorkspaceInUse, "workspace %q is still used by a sandbox", name).WithCause(err)
	}
	return engineErr("remove the workspace of", err)
}
