package store

import (
	"context"
	"time"
)

// Template names what a project's runtime starts from: a runtime config
// kept under a name in a workspace. Its Config holds only what the
// template sets (zero fields are the installation's defaults, applied when
// a project is created from it), so a project's own settings override it
// field by field.
type Template struct {
	ID          string
	OrgID       string
	WorkspaceID string
	Name        string // slug, unique within the workspace
	Description string
	Config      RuntimeConfig
	CreatedAt   time.Time
}

// TemplateQueries keep a workspace's templates.
type TemplateQueries interface {
	// CreateTemplate inserts t; a name its workspace has already is
	// ErrConflict.
	CreateTemplate(ctx context.Context, t Template) error
	GetTemplate(ctx context.Context, id string) (Template, error)
	GetTemplateByName(ctx context.Context, workspaceID, name string) (Template, error)
	// ListTemplates lists a workspace's templates, oldest first.
	ListTemplates(ctx context.Context, workspaceID string, page Page) ([]Template, string, error)
	DeleteTemplate(ctx context.Context, id string) error
}
