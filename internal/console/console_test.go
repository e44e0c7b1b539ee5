package console

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve answers one request of the console's handler.
func serve(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestIndexEverywhere: every app route answers the index (the build's, or
// the placeholder that says how to build it), never cached, and a path
// that climbs out of the build is the index too; every answer carries the
// policy and the headers that keep the console from being framed or
// sniffed.
func TestIndexEverywhere(t *testing.T) {
	h := New()
	want := "./scripts/build.sh"
	if Built() {
		want = `<script type="module"`
	}
	for _, path := range []string{"/", "/index.html", "/o/acme/w/dev/runtimes", "/o/acme/w/dev/runtimes/x/terminal", "/../../go.mod", "/signin?next=/x"} {
		rec := serve(t, h, "GET", path)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, want) || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %d %q %s", path, rec.Code, rec.Header().Get("Cache-Control"), body)
		}
		wantSecurityHeaders(t, path, rec.Header())
	}
	rec := serve(t, h, "POST", "/")
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d %v", rec.Code, rec.Header())
	}
	wantSecurityHeaders(t, "POST /", rec.Header())
}

// TestAssets: the build's hashed assets are served as files, cached for a
// year, and one that is not there is 404, not the index. It needs the
// build (./scripts/build-console.sh).
func TestAssets(t *testing.T) {
	if !Built() {
		t.Skip("this binary carries no console build: ./scripts/build-console.sh makes it")
	}
	h := New()
	assets, err := fs.ReadDir(dist, "dist/app/assets")
	if err != nil || len(assets) == 0 {
		t.Fatalf("the build has no assets: %v", err)
	}
	for _, a := range assets {
		rec := serve(t, h, "GET", "/assets/"+a.Name())
		ct := rec.Header().Get("Content-Type")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || strings.HasPrefix(ct, "text/html") {
			t.Errorf("asset %s: %d %v", a.Name(), rec.Code, rec.Header())
		}
		wantSecurityHeaders(t, a.Name(), rec.Header())
	}
	if rec := serve(t, h, "GET", "/assets/missing.js"); rec.Code != 404 {
		t.Errorf("a missing asset: %d %s", rec.Code, rec.Body)
	}
}

func wantSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Security-Policy": Policy, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "same-origin", "Cross-Origin-Opener-Policy": "same-origin",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s is %q, want %q", what, name, got, want)
		}
	}
}
