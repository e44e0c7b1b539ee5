// Package console serves the web console: the single-page app built from
// web/ (npm run build writes it to dist/app) and embedded in the binary.
//
// The built assets are not committed: dist/app is made by
// ./scripts/build.sh and ./scripts/up.sh. A binary built without them
// serves dist/placeholder.html, which says how to build the console, so
// `go build` and `go test ./...` work on a clean clone.
package console

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Built reports whether this binary carries the built console.
func Built() bool {
	_, err := fs.Stat(dist, "dist/app/index.html")
	return err == nil
}

// Policy is the console's Content-Security-Policy. Scripts, styles,
// fonts, images and connections come from the console's own origin only:
// no inline script, no eval, no plugin, and nothing may frame it. Styles
// also allow inline style attributes and elements ('unsafe-inline' in
// style-src only), which the terminal emulator sets as it lays out its
// rows; a style cannot run code.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'; frame-src 'none'; object-src 'none'"

// Handler serves the console: a file of the build under its path (hashed
// assets are cached for a year), and index.html for every other path, so
// the app's own routes can be reloaded. Every answer carries Policy.
type Handler struct {
	files fs.FS
	index []byte
	at    time.Time
}

// New returns the handler of the embedded build, or of the placeholder
// when the binary has none.
func New() *Handler {
	if !Built() {
		b, _ := dist.ReadFile("dist/placeholder.html")
		return &Handler{index: b}
	}
	sub, _ := fs.Sub(dist, "dist/app")
	b, _ := fs.ReadFile(sub, "index.html")
	return &Handler{files: sub, index: b}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", Policy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if h.files != nil && name != "" && name != "index.html" {
		if f, err := fs.Stat(h.files, name); err == nil && !f.IsDir() {
			if strings.HasPrefix(name, "assets/") {
				hd.Set("Cache-Control", "public, max-age=31536000, immutable")
			}
			http.ServeFileFS(w, r, h.files, name)
			return
		}
		if strings.HasPrefix(name, "assets/") {
			http.NotFound(w, r)
			return
		}
	}
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "index.html", h.at, bytes.NewReader(h.index))
}
