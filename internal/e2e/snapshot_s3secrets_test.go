package e2e

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/snapshot/s3test"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSnapshotS3OrgSecrets: a bucket whose credentials are each org's
// own secrets. Without them a snapshot is 422 snapshot_credentials_missing
// and nothing is recorded; with a wrong key the bucket refuses (503); with
// the right one the snapshot is kept in the bucket, restores and deletes,
// and no answer holds a value. A secret deleted since makes a delete 422,
// the snapshot kept.
func TestSnapshotS3OrgSecrets(t *testing.T) {
	const accessKey, secretKey = "AKIA-ACME-ORG", "acme-secret-key-value"
	srv := s3test.StartSigned(t, "snaps", accessKey)
	e := newLifeEnv(t, servertest.Options{Configure: func(c *config.Config) {
		c.SnapshotsS3Endpoint, c.SnapshotsS3Bucket, c.SnapshotsS3Region = srv.URL, srv.Bucket, "us-east-1"
		c.SnapshotsS3AllowInternal = true
		c.SnapshotsS3AccessKeySecret, c.SnapshotsS3SecretKeySecret = "s3-access", "s3-secret"
	}})
	rid := e.project(t, "p1", pc.RuntimeConfig{})
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil)
	e.exec(t, rid, "sh", "-c", "echo in-the-bucket > /workspace/f.txt")
	snapOf := func() string { return rtPath(rid) + "/snapshots" }

	r := e.env.Do(t, "POST", snapOf(), pc.CreateSnapshotRequest{Name: "s"})
	if r.Status != 422 || r.Code() != "snapshot_credentials_missing" || !strings.Contains(string(r.Body), "s3-access") {
		t.Fatalf("a snapshot without the org's secrets: %d %s", r.Status, r.Body)
	}
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", pc.CreateSecretRequest{Name: "s3-access", Value: "AKIA-WRONG"})
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", pc.CreateSecretRequest{Name: "s3-secret", Value: secretKey})
	if r := e.env.Do(t, "POST", snapOf(), pc.CreateSnapshotRequest{Name: "s"}); r.Status != 503 || r.Code() != "snapshot_destination_unavailable" {
		t.Fatalf("a snapshot with a key the bucket refuses: %d %s", r.Status, r.Body)
	}
	var l pc.List[pc.Snapshot]
	e.env.Must(t, 200, "GET", snapOf(), nil).Decode(t, &l)
	if len(l.Items) != 0 {
		t.Fatalf("refused snapshots were recorded: %+v", l.Items)
	}

	e.env.Must(t, 200, "PUT", "/api/v1/org/acme/secrets/s3-access", pc.ReplaceSecretRequest{Value: new(accessKey)})
	r = e.env.Must(t, 201, "POST", snapOf(), pc.CreateSnapshotRequest{Name: "s"})
	var s pc.Snapshot
	r.Decode(t, &s)
	if s.Destination != "s3" || s.SizeBytes <= 0 || strings.Contains(string(r.Body), accessKey) || strings.Contains(string(r.Body), secretKey) {
		t.Fatalf("snapshot %s", r.Body)
	}
	res := (&snapEnv{lifeEnv: e}).restore(t, s.ID, pc.RestoreSnapshotRequest{ProjectName: "from-bucket"})
	if got := e.exec(t, res.Runtime.ID, "cat", "/workspace/f.txt"); got != "in-the-bucket\n" {
		t.Fatalf("restored from the bucket: %q", got)
	}

	e.env.Must(t, 204, "DELETE", "/api/v1/org/acme/secrets/s3-secret", nil)
	if r := e.env.Do(t, "DELETE", snapsPath+"/"+s.ID, nil); r.Status != 422 || r.Code() != "snapshot_credentials_missing" {
		t.Fatalf("a delete without the org's secret: %d %s", r.Status, r.Body)
	}
	e.env.Must(t, 200, "GET", snapsPath+"/"+s.ID, nil)
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", pc.CreateSecretRequest{Name: "s3-secret", Value: secretKey})
	e.env.Must(t, 204, "DELETE", snapsPath+"/"+s.ID, nil)
	if r := e.env.Do(t, "GET", snapsPath+"/"+s.ID, nil); r.Status != 404 {
		t.Fatalf("a deleted snapshot: %d %s", r.Status, r.Body)
	}
}
