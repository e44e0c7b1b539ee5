package api_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestConsoleNotOnPreviews: a sandbox's app never runs as the console. A
// path URL, which shares the console's origin, answers the app's page
// under Content-Security-Policy: sandbox (an opaque origin of its own),
// not the console's policy, even for a path that is an HTML page; a
// preview host is not the console either; and the console's cookie alone
// opens neither (the gateway never reads it), nor reaches the app.
func TestConsoleNotOnPreviews(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>app</p><!-- cookie=%q -->", r.Header.Get("Cookie"))
	}))
	t.Cleanup(app.Close)
	_, appPort, _ := net.SplitHostPort(app.Listener.Addr().String())

	env := agentEnv(t)
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	pathURL := rtPath + "/ports/" + appPort + "/index.html"
	host := appPort + "-" + api.ShortID(p.RuntimeID) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]

	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: env.Key})
	cookie := "paddock_console=" + b.cookie + "; app=1"
	if r, _ := b.do(t, "GET", "/api/v1/me", nil); r.Status != 200 {
		t.Fatalf("the cookie: %d %s", r.Status, r.Body)
	}
	// The cookie alone opens no preview.
	for _, h := range []string{"", host} {
		a := previewCall(t, env, h, pathURL, []string{"Cookie", cookie})
		if a.status != 401 || strings.Contains(string(a.body), "<p>app</p>") || a.header.Get("Content-Security-Policy") == console.Policy {
			t.Errorf("host %q with the console's cookie alone: %s", h, a)
		}
	}
	// With the key: the app's page, sandboxed on the path URL, and never
	// the console's cookie.
	withKey := []string{"Cookie", cookie, "Authorization", "Bearer " + env.Key}
	a := previewCall(t, env, "", pathURL, withKey)
	if csp := a.header.Get("Content-Security-Policy"); a.status != 200 || !strings.HasPrefix(csp, "sandbox") || string(a.body) != `<p>app</p><!-- cookie="" -->` {
		t.Fatalf("path URL: %s", a)
	}
	a = previewCall(t, env, host, "/", withKey)
	if a.status != 200 || a.header.Get("Content-Security-Policy") == console.Policy || string(a.body) != `<p>app</p><!-- cookie="app=1" -->` {
		t.Fatalf("preview host: %s", a)
	}
}

// TestConsoleSameSitePreviewsWarned: a server whose preview hosts share a
// site with the console (here the preview domain is its own host) warns
// at its start; one with previews elsewhere does not.
func TestConsoleSameSitePreviewsWarned(t *testing.T) {
	for _, c := range []struct {
		domain string
		warn   bool
	}{{"127.0.0.1", true}, {"previews.example", false}} {
		var logs testenv.Buffer
		servertest.New(t, servertest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Preview: api.Preview{Domain: c.domain}})
		if got := strings.Contains(logs.String(), "preview hosts share a site with the console"); got != c.warn {
			t.Errorf("preview domain %q: warned %v, want %v:\n%s", c.domain, got, c.warn, logs.String())
		}
	}
}
