-- name: CreateTemplateBuild :exec
INSERT INTO template_builds (id, org_id, workspace_id, template, state, image, digest, size_bytes, error_code, log_tail, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(template), sqlc.arg(state), sqlc.arg(image),
        sqlc.arg(digest), sqlc.arg(size_bytes), sqlc.arg(error_code), sqlc.arg(log_tail), sqlc.arg(created_at), sqlc.arg(updated_at));

-- name: FinishTemplateBuild :execrows
UPDATE template_builds SET state = sqlc.arg(state), digest = sqlc.arg(digest), size_bytes = sqlc.arg(size_bytes),
    error_code = sqlc.arg(error_code), log_tail = sqlc.arg(log_tail), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND state = 'building';

-- name: GetTemplateBuild :one
SELECT * FROM template_builds WHERE id = ?;

-- name: ListTemplateBuilds :many
SELECT * FROM template_builds
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.arg(template) = '' OR template = sqlc.arg(template))
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: AddOrgImage :exec
INSERT INTO org_images (org_id, image, build_id, created_at) VALUES (sqlc.arg(org_id), sqlc.arg(image), sqlc.arg(build_id), sqlc.arg(created_at))
ON CONFLICT (org_id, image) DO UPDATE SET build_id = excluded.build_id;

-- name: OrgImageCount :one
SELECT COUNT(*) FROM org_images WHERE org_id = sqlc.arg(org_id) AND image = sqlc.arg(image);

-- name: DeleteOrgImage :execrows
DELETE FROM org_images WHERE org_id = sqlc.arg(org_id) AND image = sqlc.arg(image);

-- name: SetTemplateConfig :execrows
UPDATE templates SET config = sqlc.arg(config) WHERE id = sqlc.arg(id);

-- name: CountImageUsers :one
SELECT (SELECT COUNT(*) FROM runtimes r WHERE r.org_id = sqlc.arg(org_id) AND json_extract(r.config, '$.image') = sqlc.arg(image))
     + (SELECT COUNT(*) FROM templates t WHERE t.org_id = sqlc.arg(org_id) AND json_extract(t.config, '$.image') = sqlc.arg(image)) AS users;

-- name: FailStaleTemplateBuilds :execrows
UPDATE template_builds SET state = 'failed', error_code = sqlc.arg(error_code), updated_at = sqlc.arg(updated_at)
WHERE state = 'building' AND created_at < sqlc.arg(before);
