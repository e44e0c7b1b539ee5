// Package s3test runs a real S3-compatible server (gofakes3, in memory)
// on loopback for tests of snapshots kept in a bucket.
package s3test

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// StartSigned is Start, answering only requests signed (AWS signature
// version 4) with the access key id accessKey: any other is 403
// InvalidAccessKeyId, as S3 answers it. The signature itself is not
// checked.
func StartSigned(t testing.TB, bucket, accessKey string) Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if signedBy(r.Header.Get("Authorization")) != accessKey {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>` +
				`<Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>`))
			return
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return Server{URL: srv.URL, Bucket: bucket}
}

// signedBy is the access key id of a version 4 Authorization header.
func signedBy(auth string) string {
	_, rest, ok := strings.Cut(auth, "Credential=")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !ok {
		return ""
	}
	ak, _, _ := strings.Cut(rest, "/")
	return ak
}
