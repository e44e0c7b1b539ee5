// Package s3test runs a real S3-compatible server (gofakes3, in memory)
// on loopback for tests of snapshots kept in a bucket.
package s3test

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an S3-compatible server with one bucket.
type Server struct {
	// URL is its endpoint, http://127.0.0.1:PORT.
	URL    string
	Bucket string
}

// Start serves an in-memory S3 with bucket on a loopback port until t
// ends.
func Start(t testing.TB, bucket string) Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return Server{URL: srv.URL, Bucket: bucket}
}
