package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Template builds and org images
//
// Vocabulary:
//
//   - TemplateBuild: one build of an image from a Dockerfile for a template
//     (internal/templatebuild), recorded from its start: building, then
//     succeeded or failed.
//   - Org image: an image on an org's own allow-list (a build's image),
//     which that org's runtimes may name and no other org's.
// ---------------------------------------------------------------------------

// The states of a template build.
const (
	BuildBuilding  = "building"
	BuildSucceeded = "succeeded"
	BuildFailed    = "failed"
)

// TemplateBuild is one build of a template's image.
type TemplateBuild struct {
	ID          string
	OrgID       string
	WorkspaceID string
	// Template is the template's name (the build creates or updates it).
	Template string
	State    string
	// Image is the reference the build tags (for its org).
	Image string
	// Digest and SizeBytes are the built image's (once succeeded).
	Digest    string
	SizeBytes int64
	// ErrorCode is a failed build's code; LogTail the end of its output.
	ErrorCode string
	LogTail   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TemplateBuildQueries keep template builds' records and the orgs' own
// image allow-lists.
type TemplateBuildQueries interface {
	// CreateTemplateBuild inserts b (state building).
	CreateTemplateBuild(ctx context.Context, b TemplateBuild) error
	// FinishTemplateBuild records b's end (State, Digest, SizeBytes,
	// ErrorCode, LogTail, UpdatedAt); a build that is not building is
	// ErrConflict.
	FinishTemplateBuild(ctx context.Context, b TemplateBuild) error
	// FailStaleTemplateBuilds fails, with code, the builds still
	// building that began before before: no server builds them any more
	// (a build is stopped at its time limit, and one whose server died
	// was never finished), and answers how many.
	FailStaleTemplateBuilds(ctx context.Context, before, now time.Time, code string) (int64, error)
	GetTemplateBuild(ctx context.Context, id string) (TemplateBuild, error)
	// ListTemplateBuilds lists a workspace's builds, oldest first; only
	// template's when it is not "".
	ListTemplateBuilds(ctx context.Context, workspaceID, template string, page Page) ([]TemplateBuild, string, error)
	// AddOrgImage puts image on orgID's allow-list (buildID made it).
	AddOrgImage(ctx context.Context, orgID, image, buildID string) error
	// OrgImageAllowed reports whether image is on orgID's allow-list.
	OrgImageAllowed(ctx context.Context, orgID, image string) (bool, error)
	// DeleteOrgImage takes image off orgID's allow-list.
	DeleteOrgImage(ctx context.Context, orgID, image string) error
	// CountImageUsers counts orgID's runtimes and templates whose config
	// names image.
	CountImageUsers(ctx context.Context, orgID, image string) (int64, error)
	// SetTemplateConfig replaces the config of template t.ID with
	// t.Config (a build's image).
	SetTemplateConfig(ctx context.Context, t Template) error
}
