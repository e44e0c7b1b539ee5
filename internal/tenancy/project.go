package tenancy

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Project finds a project of workspace ws by key, its id or its name: 400
// invalid_project when key is neither, 404 project_not_found when ws has
// no such project (one of another workspace is not found alike).
func (s *Service) Project(ctx context.Context, ws store.Workspace, key string) (store.Project, error) {
	var p store.Project
	var err error
	switch {
	case store.IsID(key):
		p, err = s.store.GetProject(ctx, key)
		if err == nil && p.WorkspaceID != ws.ID {
			err = errdefs.ErrNotFound
		}
	case NameRE.MatchString(key):
		p, err = s.store.GetProjectByName(ctx, ws.ID, key)
	default:
		return p, errdefs.InvalidArgument("invalid_project", "%q is neither a project id nor a project name", key)
	}
	if errdefs.IsNotFound(err) {
		return p, errdefs.NotFound("project_not_found", "project %q not found", key)
	}
	return p, err
}

// Projects lists a workspace's projects, a page at a time.
func (s *Service) Projects(ctx context.Context, workspaceID string, page store.Page) ([]store.Project, string, error) {
	return s.store.ListProjects(ctx, workspaceID, page)
}
