package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/e2b"
)

// E2B configures the E2B-compatible surface (internal/e2b).
type E2B = e2b.Config

// newE2B is the E2B-compatible surface, on the API's access service,
// rate limits and open streams.
func (a *API) newE2B(cfg E2B) *e2b.Gateway {
	return e2b.New(e2b.Options{Config: cfg, Path: a.path, IAM: a.iam, Runtimes: a.runtimes,
		Tenancy: a.tenancy, Door: previewDoor{a}, MaxBody: a.limits.UploadBodyBytes, MaxJSON: a.limits.JSONBodyBytes, Logger: a.logger,
		Ports: a.previews})
}

// serveE2B answers a request to the E2B-compatible surface; ok is false
// when r is not one.
func (a *API) serveE2B(w http.ResponseWriter, r *http.Request) bool {
	return a.e2b.Serve(w, r)
}
