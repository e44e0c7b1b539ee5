package tenancy

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
)

// nameStore is what Names reads of the store.
type nameStore interface {
	GetOrg(ctx context.Context, id string) (store.Org, error)
	GetWorkspace(ctx context.Context, id string) (store.Workspace, error)
	GetProject(ctx context.Context, id string) (store.Project, error)
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
}

// Names looks up, once each, the names people know things by: a
// project's name for its runtime and sandboxes, a workspace's, an org's.
// Something that is gone (a deleted project) has no name. A Names lives
// for one request; it is not safe for concurrent use.
type Names struct {
	st       nameStore
	projects map[string]string
}

// Names returns an empty Names.
func (s *Service) Names() *Names { return &Names{st: s.store, projects: map[string]string{}} }

// Project is the name of project id; "" for none.
func (n *Names) Project(ctx context.Context, id string) string {
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

// Runtime is the name of a runtime: its project's.
func (n *Names) Runtime(ctx context.Context, id string) string {
	rt, err := n.st.GetRuntime(ctx, id)
	if err != nil {
		return ""
	}
	return n.Project(ctx, rt.ProjectID)
}

// UsageKey names the key of a usage row grouped by group.
func (n *Names) UsageKey(ctx context.Context, group store.UsageGroup, key string) string {
	switch group {
	case store.UsageByRuntime:
		return n.Runtime(ctx, key)
	case store.UsageByProject:
		return n.Project(ctx, key)
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
