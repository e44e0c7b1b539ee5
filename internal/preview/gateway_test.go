package preview

import (
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/internal/store"
)

// TestAddresses: which requests are previews (a preview host of the
// configured domain, a path URL), and the URL the gateway hands out for a
// port.
func TestAddresses(t *testing.T) {
	g := New(Options{Config: Config{Domain: "Preview.Example.com", Port: "8080"}})
	rt := store.Runtime{ID: "0123abcd-ef01-4234-8567-89abcdef0123"}
	if got, want := g.URL(rt, 3000), "http://3000-0123abcdef01.preview.example.com:8080/"; got != want {
		t.Fatalf("URL %q, want %q", got, want)
	}
	for _, tc := range []struct {
		host, path string
		want       bool
	}{
		{"3000-0123abcdef01.preview.example.com:8080", "/", true},
		{"3000-0123ABCDEF01.PREVIEW.example.com", "/x", true},
		{"65536-0123abcdef01.preview.example.com", "/", false},
		{"0-0123abcdef01.preview.example.com", "/", false},
		{"3000-0123abcdef0.preview.example.com", "/", false},
		{"3000-0123abcdef01.localhost", "/", false},
		{"api.example.com", "/api/v1/org/acme/ws/dev/runtimes/" + rt.ID + "/ports/3000/app", true},
		{"api.example.com", "/api/v1/org/acme/ws/dev/runtimes/" + rt.ID + "/ports/3000", true},
		{"api.example.com", "/api/v1/org/acme/ws/dev/runtimes/" + rt.ID + "/ports", false},
		{"api.example.com", "/api/v1/org/acme/ws/dev/runtimes/" + rt.ID + "/previews/3000", false},
	} {
		r := httptest.NewRequest("GET", "http://"+tc.host+tc.path, nil)
		if got := g.Is(r); got != tc.want {
			t.Errorf("%s%s: preview %v, want %v", tc.host, tc.path, got, tc.want)
		}
	}
	if got := New(Options{}).URL(rt, 80); got != "http://80-0123abcdef01.localhost/" {
		t.Errorf("default domain: %q", got)
	}
}
