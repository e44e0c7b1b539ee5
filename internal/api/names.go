package api

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
)

// names looks up, once per request, the names people know things by: a
// project's name for its runtime and sandboxes, a workspace's, an org's.
// Something that is gone (a deleted project) has no name.
type names struct {
	st       store.Store
	projects map[string]string
}

func (a *API) names() *names { return &names{st: a.store, projects: map[string]string{}} }

func (n *names) project(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if name, ok := n.projects[id]; ok {
		return name
	}
	p, err := n.st.GetProject(ctx, id)
	name := ""
	if err == nil {
		name = p.Name
	}
	n.projects[id] = name
	return name
}

// ofRuntime is the name of a runtime: its project's.
func (n *names) ofRuntime(ctx context.Context, id string) string {
	rt, err := n.st.GetRuntime(ctx, id)
	if err != nil {
		return ""
	}
	return n.project(ctx, rt.ProjectID)
}

// ofUsageKey names a usage group's key.
func (n *names) ofUsageKey(ctx context.Context, group store.UsageGroup, key string) string {
	switch group {
	case store.UsageByRuntime:
		return n.ofRuntime(ctx, key)
	case store.UsageByProject:
		return n.project(ctx, key)
	case store.UsageByWorkspace:
		if w, err := n.st.GetWorkspace(ctx, key); err == nil {
			return w.Name
		}
	case store.UsageByOrg:
		if o, err := n.st.GetOrg(ctx, key); err == nil {
			return o.Name
		}
	}
	return ""
}
