package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
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

	dial := shimtest.Serve(t)
	env := servertest.New(t, servertest.Options{Provider: fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }})})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
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
		status, hdr, body := rawGet(t, env, h, pathURL, "Cookie", cookie)
		if status != 401 || strings.Contains(body, "<p>app</p>") || hdr.Get("Content-Security-Policy") == console.Policy {
			t.Errorf("host %q with the console's cookie alone: %d %s", h, status, body)
		}
	}
	// With the key: the app's page, sandboxed on the path URL, and never
	// the console's cookie.
	status, hdr, body := rawGet(t, env, "", pathURL, "Cookie", cookie, "Authorization", "Bearer "+env.Key)
	if csp := hdr.Get("Content-Security-Policy"); status != 200 || !strings.HasPrefix(csp, "sandbox") || body != `<p>app</p><!-- cookie="" -->` {
		t.Fatalf("path URL: %d %q %s", status, csp, body)
	}
	status, hdr, body = rawGet(t, env, host, "/", "Cookie", cookie, "Authorization", "Bearer "+env.Key)
	if status != 200 || hdr.Get("Content-Security-Policy") == console.Policy || body != `<p>app</p><!-- cookie="app=1" -->` {
		t.Fatalf("preview host: %d %v %s", status, hdr, body)
	}
}

// rawGet sends GET path to env, to host when not "", with the header
// name and value pairs hdr.
func rawGet(t *testing.T, env *servertest.Env, host, path string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}
