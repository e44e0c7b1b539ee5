package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Template builds and org images (migration 0022).

const resBuild = dialect.TemplateBuild

func toTemplateBuild(b pgdb.TemplateBuild) store.TemplateBuild {
	return store.TemplateBuild{ID: b.ID, OrgID: b.OrgID, WorkspaceID: b.WorkspaceID, Template: b.Template, State: b.State,
		Image: b.Image, Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail,
		CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC()}
}

// CreateTemplateBuild inserts b.
func (q *queries) CreateTemplateBuild(ctx context.Context, b store.TemplateBuild) error {
	if err := dialect.CheckTemplateBuild(b); err != nil {
		return err
	}
	at := orNow(b.CreatedAt)
	return classify("create template build", resBuild, q.q.CreateTemplateBuild(ctx, pgdb.CreateTemplateBuildParams{
		ID: b.ID, OrgID: b.OrgID, WorkspaceID: b.WorkspaceID, Template: b.Template, State: b.State, Image: b.Image,
		Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail, CreatedAt: at, UpdatedAt: at,
	}))
}

// FinishTemplateBuild records b's end.
func (q *queries) FinishTemplateBuild(ctx context.Context, b store.TemplateBuild) error {
	if err := dialect.CheckBuildEnd(b); err != nil {
		return err
	}
	n, err := q.q.FinishTemplateBuild(ctx, pgdb.FinishTemplateBuildParams{
		State: b.State, Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail,
		UpdatedAt: orNow(b.UpdatedAt), ID: b.ID,
	})
	if err == nil && n == 0 {
		if _, gerr := q.GetTemplateBuild(ctx, b.ID); gerr != nil {
			return gerr
		}
		return dialect.BuildFinished(b.ID)
	}
	return classify("finish template build", resBuild, err)
}

// FailStaleTemplateBuilds fails the builds left building since before.
func (q *queries) FailStaleTemplateBuilds(ctx context.Context, before, now time.Time, code string) (int64, error) {
	n, err := q.q.FailStaleTemplateBuilds(ctx, pgdb.FailStaleTemplateBuildsParams{ErrorCode: code, UpdatedAt: now, Before: before})
	return n, classify("fail stale template builds", resBuild, err)
}

// GetTemplateBuild returns the build id.
func (q *queries) GetTemplateBuild(ctx context.Context, id string) (store.TemplateBuild, error) {
	b, err := q.q.GetTemplateBuild(ctx, id)
	return toTemplateBuild(b), classify("get template build", resBuild, err)
}

// ListTemplateBuilds lists workspaceID's builds (template's only, unless
// "") in creation order.
func (q *queries) ListTemplateBuilds(ctx context.Context, workspaceID, template string, page store.Page) ([]store.TemplateBuild, string, error) {
	return listPage(ctx, "list template builds", resBuild, page,
		func(ctx context.Context, k keyset) ([]pgdb.TemplateBuild, error) {
			return q.q.ListTemplateBuilds(ctx, pgdb.ListTemplateBuildsParams{WorkspaceID: workspaceID, Template: template, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toTemplateBuild, func(b store.TemplateBuild) (time.Time, string) { return b.CreatedAt, b.ID })
}

// AddOrgImage puts image on orgID's allow-list.
func (q *queries) AddOrgImage(ctx context.Context, orgID, image, buildID string) error {
	if err := dialect.Required(dialect.OrgImage, "org id", orgID, "image", image); err != nil {
		return err
	}
	return classify("add org image", dialect.OrgImage, q.q.AddOrgImage(ctx, pgdb.AddOrgImageParams{
		OrgID: orgID, Image: image, BuildID: buildID, CreatedAt: time.Now(),
	}))
}

// OrgImageAllowed reports whether image is on orgID's allow-list.
func (q *queries) OrgImageAllowed(ctx context.Context, orgID, image string) (bool, error) {
	n, err := q.q.OrgImageCount(ctx, pgdb.OrgImageCountParams{OrgID: orgID, Image: image})
	return n > 0, classify("org image", dialect.OrgImage, err)
}

// DeleteOrgImage takes image off orgID's allow-list.
func (q *queries) DeleteOrgImage(ctx context.Context, orgID, image string) error {
	n, err := q.q.DeleteOrgImage(ctx, pgdb.DeleteOrgImageParams{OrgID: orgID, Image: image})
	return affected("delete org image", dialect.OrgImage, n, err)
}

// SetTemplateConfig replaces t's config.
func (q *queries) SetTemplateConfig(ctx context.Context, t store.Template) error {
	config, err := dialect.CheckTemplate(t)
	if err != nil {
		return err
	}
	n, err := q.q.SetTemplateConfig(ctx, pgdb.SetTemplateConfigParams{Config: config, ID: t.ID})
	return affected("set template config", dialect.Template, n, err)
}

// CountImageUsers counts orgID's runtimes and templates configured with
// image.
func (q *queries) CountImageUsers(ctx context.Context, orgID, image string) (int64, error) {
	n, err := q.q.CountImageUsers(ctx, pgdb.CountImageUsersParams{OrgID: orgID, Image: image})
	return n, classify("count image users", dialect.OrgImage, err)
}
