package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Template builds and org images (migration 0022).

const resBuild = dialect.TemplateBuild

func toTemplateBuild(b litedb.TemplateBuild) (store.TemplateBuild, error) {
	return store.TemplateBuild{ID: b.ID, OrgID: b.OrgID, WorkspaceID: b.WorkspaceID, Template: b.Template, State: b.State,
		Image: b.Image, Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail,
		CreatedAt: fromMicro(b.CreatedAt), UpdatedAt: fromMicro(b.UpdatedAt)}, nil
}

// CreateTemplateBuild inserts b.
func (q *queries) CreateTemplateBuild(ctx context.Context, b store.TemplateBuild) error {
	if err := dialect.CheckTemplateBuild(b); err != nil {
		return err
	}
	at := micros(orNow(b.CreatedAt))
	return classify("create template build", resBuild, q.wq.CreateTemplateBuild(ctx, litedb.CreateTemplateBuildParams{
		ID: b.ID, OrgID: b.OrgID, WorkspaceID: b.WorkspaceID, Template: b.Template, State: b.State, Image: b.Image,
		Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail, CreatedAt: at, UpdatedAt: at,
	}))
}

// FinishTemplateBuild records b's end.
func (q *queries) FinishTemplateBuild(ctx context.Context, b store.TemplateBuild) error {
	if err := dialect.CheckBuildEnd(b); err != nil {
		return err
	}
	n, err := q.wq.FinishTemplateBuild(ctx, litedb.FinishTemplateBuildParams{
		State: b.State, Digest: b.Digest, SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail,
		UpdatedAt: micros(orNow(b.UpdatedAt)), ID: b.ID,
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
	n, err := q.wq.FailStaleTemplateBuilds(ctx, litedb.FailStaleTemplateBuildsParams{ErrorCode: code, UpdatedAt: micros(now), Before: micros(before)})
	return n, classify("fail stale template builds", resBuild, err)
}

// GetTemplateBuild returns the build id.
func (q *queries) GetTemplateBuild(ctx context.Context, id string) (store.TemplateBuild, error) {
	b, err := q.rq.GetTemplateBuild(ctx, id)
	if err != nil {
		return store.TemplateBuild{}, classify("get template build", resBuild, err)
	}
	return toTemplateBuild(b)
}

// ListTemplateBuilds lists workspaceID's builds (template's only, unless
// "") in creation order.
func (q *queries) ListTemplateBuilds(ctx context.Context, workspaceID, template string, page store.Page) ([]store.TemplateBuild, string, error) {
	return listPage(ctx, "list template builds", resBuild, page,
		func(ctx context.Context, k keyset) ([]litedb.TemplateBuild, error) {
			return q.rq.ListTemplateBuilds(ctx, litedb.ListTemplateBuildsParams{WorkspaceID: workspaceID, Template: template, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toTemplateBuild, func(b store.TemplateBuild) (time.Time, string) { return b.CreatedAt, b.ID })
}

// AddOrgImage puts image on orgID's allow-list.
func (q *queries) AddOrgImage(ctx context.Context, orgID, image, buildID string) error {
	if err := dialect.Required(dialect.OrgImage, "org id", orgID, "image", image); err != nil {
		return err
	}
	return classify("add org image", dialect.OrgImage, q.wq.AddOrgImage(ctx, litedb.AddOrgImageParams{
		OrgID: orgID, Image: image, BuildID: buildID, CreatedAt: micros(time.Now()),
	}))
}

// OrgImageAllowed reports whether image is on orgID's allow-list.
func (q *queries) OrgImageAllowed(ctx context.Context, orgID, image string) (bool, error) {
	n, err := q.rq.OrgImageCount(ctx, litedb.OrgImageCountParams{OrgID: orgID, Image: image})
	return n > 0, classify("org image", dialect.OrgImage, err)
}

// DeleteOrgImage takes image off orgID's allow-list.
func (q *queries) DeleteOrgImage(ctx context.Context, orgID, image string) error {
	n, err := q.wq.DeleteOrgImage(ctx, litedb.DeleteOrgImageParams{OrgID: orgID, Image: image})
	return affected("delete org image", dialect.OrgImage, n, err)
}

// SetTemplateConfig replaces t's config.
func (q *queries) SetTemplateConfig(ctx context.Context, t store.Template) error {
	config, err := dialect.CheckTemplate(t)
	if err != nil {
		return err
	}
	n, err := q.wq.SetTemplateConfig(ctx, litedb.SetTemplateConfigParams{Config: config, ID: t.ID})
	return affected("set template config", dialect.Template, n, err)
}

// CountImageUsers counts orgID's runtimes and templates configured with
// image.
func (q *queries) CountImageUsers(ctx context.Context, orgID, image string) (int64, error) {
	n, err := q.rq.CountImageUsers(ctx, litedb.CountImageUsersParams{OrgID: orgID, Image: image})
	return n, classify("count image users", dialect.OrgImage, err)
}
