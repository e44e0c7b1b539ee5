package store

import (
	"context"
	"time"
)

// E2BSandbox is what a runtime made through the E2B-compatible surface
// (internal/e2b) keeps beside paddock's model: the template the SDK named
// and the sandbox's metadata. Only runtimes with one are E2B sandboxes;
// it is deleted with its runtime.
type E2BSandbox struct {
	RuntimeID   string
	WorkspaceID string
	// TemplateID is the template as the SDK named it ("base" for the
	// default image).
	TemplateID string
	// Metadata is the SDK's key-value metadata; nil stores as empty.
	Metadata  map[string]string
	CreatedAt time.Time
}

// E2BQueries keep E2B sandboxes.
type E2BQueries interface {
	// CreateE2BSandbox inserts s; its runtime must exist, and have none
	// yet (ErrConflict).
	CreateE2BSandbox(ctx context.Context, s E2BSandbox) error
	// GetE2BSandbox returns the E2B sandbox of runtimeID, ErrNotFound
	// when it is not one.
	GetE2BSandbox(ctx context.Context, runtimeID string) (E2BSandbox, error)
	// ListE2BSandboxes lists a workspace's E2B sandboxes, oldest first.
	ListE2BSandboxes(ctx context.Context, workspaceID string, page Page) ([]E2BSandbox, string, error)
}
