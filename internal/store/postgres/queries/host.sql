-- name: CreateHost :exec
INSERT INTO hosts (id, org_id, name, address, ssh_user, host_key, key_id, sealed_key, docker_socket, run_dir, disk_dir,
                   idle_teardown_seconds, teardown_command, cost_per_hour_micros, mode, state, last_used_at, created_by, created_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(name), sqlc.arg(address), sqlc.arg(ssh_user), sqlc.arg(host_key), sqlc.arg(key_id),
        sqlc.arg(sealed_key), sqlc.arg(docker_socket), sqlc.arg(run_dir), sqlc.arg(disk_dir),
        sqlc.arg(idle_teardown_seconds), sqlc.arg(teardown_command), sqlc.arg(cost_per_hour_micros), sqlc.arg(mode), 'ready', sqlc.arg(created_at), sqlc.arg(created_by), sqlc.arg(created_at));

-- name: GetHost :one
SELECT * FROM hosts WHERE id = $1;

-- name: GetHostByName :one
SELECT * FROM hosts WHERE org_id = sqlc.arg(org_id) AND name = sqlc.arg(name);

-- name: ListHosts :many
SELECT * FROM hosts
WHERE org_id = sqlc.arg(org_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: ListHostsAfter :many
SELECT * FROM hosts WHERE id > sqlc.arg(after_id)::text ORDER BY id LIMIT sqlc.arg(lim);

-- name: DeleteHost :execrows
DELETE FROM hosts WHERE id = $1;

-- name: SetHostState :execrows
UPDATE hosts SET state = sqlc.arg(state), last_used_at = sqlc.arg(last_used_at) WHERE id = sqlc.arg(id);

-- name: ClaimHostTeardown :execrows
UPDATE hosts SET state = 'torn_down' WHERE id = sqlc.arg(id) AND state = 'ready' AND last_used_at = sqlc.arg(last_used_at);

-- name: SetHostSeal :execrows
UPDATE hosts SET key_id = sqlc.arg(key_id), sealed_key = sqlc.arg(sealed_key) WHERE id = sqlc.arg(id);
