package server

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestWarnSameSitePreviews: the start warns when preview hosts share a
// site with the console (the preview domain is the server's host, or a
// parent or child of it), and only then.
func TestWarnSameSitePreviews(t *testing.T) {
	for _, c := range []struct {
		server, preview string
		warn            bool
	}{
		{"localhost:8080", "", true},
		{"localhost:8080", "localhost", true},
		{"paddock.example.com", "example.com", true},
		{"paddock.example.com:443", "preview.paddock.example.com", true},
		{"Paddock.Example.com.", "paddock.example.com", true},
		{"127.0.0.1:8080", "127.0.0.1", true},
		{"127.0.0.1:8080", "", false},
		{"[::1]:8080", "localhost", false},
		{"paddock.example.com", "example-previews.net", false},
		{"paddock.example.com", "ample.com", false},
		{"example.com", "notexample.com", false},
	} {
		var logs testenv.Buffer
		warnSameSitePreviews(slog.New(slog.NewTextHandler(&logs, nil)), c.server, c.preview)
		out := logs.String()
		if got := strings.Contains(out, "level=WARN") && strings.Contains(out, "preview hosts share a site with the console"); got != c.warn {
			t.Errorf("server %q, preview domain %q: warned %v, want %v: %s", c.server, c.preview, got, c.warn, out)
		}
	}
}
