package api_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestPreviewAppHeaders runs the proxy in front of a real agent (in this
// process, so the sandbox's loopback is the host's) and an app on a
// loopback port, without Docker. The app's Set-Cookie lines naming
// paddock's cookies never reach the client, in its interim answers (103
// Early Hints, which the reverse proxy writes as they come) as in its
// final ones; a path URL passes on no Set-Cookie at all and gives the
// app no Cookie header.
func TestPreviewAppHeaders(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/early":
			for _, l := range []string{"paddock_preview=planted", "=paddock_preview_p=planted", "app_early=1"} {
				w.Header().Add("Set-Cookie", l)
			}
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Del("Set-Cookie")
			for _, l := range []string{"Paddock_Preview=planted", "paddock_console=planted; Domain=localhost", "__Host-paddock_console=planted; Secure; Path=/", "app=1"} {
				w.Header().Add("Set-Cookie", l)
			}
			fmt.Fprintln(w, "done")
		case "/whoami":
			fmt.Fprintf(w, "cookie=%q auth=%q key=%q", r.Header.Get("Cookie"), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		}
	}))
	t.Cleanup(app.Close)
	_, appPort, _ := net.SplitHostPort(app.Listener.Addr().String())

	env := agentEnv(t)
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rtPath+"/start", nil)

	host := appPort + "-" + api.ShortID(p.RuntimeID) + ".localhost:" + env.URL[strings.LastIndex(env.URL, ":")+1:]
	pathURL := rtPath + "/ports/" + appPort

	// get sends GET path (to host, when not "") with the key and a
	// cookie, and returns the Set-Cookie lines of each answer, interim
	// ones first, and the body.
	get := func(t *testing.T, host, path string) (early, final []string, body string) {
		t.Helper()
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			early = append(early, strconv.Itoa(code))
			early = append(early, h.Values("Set-Cookie")...)
			return nil
		}}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", env.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("X-Api-Key", env.Key) // as an e2b SDK sends it
		req.Header.Set("Cookie", "app=1; paddock_preview=sent; paddock_console=sent; __Host-paddock_console=sent; other=2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%s%s: %d %s", host, path, resp.StatusCode, b)
		}
		return early, resp.Header.Values("Set-Cookie"), string(b)
	}

	t.Run("preview host", func(t *testing.T) {
		early, final, _ := get(t, host, "/early")
		if want := []string{"103", "app_early=1"}; strings.Join(early, "|") != strings.Join(want, "|") {
			t.Errorf("interim answers %q, want %q", early, want)
		}
		if want := []string{"app=1"}; strings.Join(final, "|") != strings.Join(want, "|") {
			t.Errorf("final Set-Cookie %q, want %q", final, want)
		}
		if _, _, body := get(t, host, "/whoami"); body != `cookie="app=1; other=2" auth="" key=""` {
			t.Errorf("what reached the app: %s", body)
		}
	})
	t.Run("path URL", func(t *testing.T) {
		early, final, _ := get(t, "", pathURL+"/early")
		if want := []string{"103"}; strings.Join(early, "|") != strings.Join(want, "|") {
			t.Errorf("interim answers %q, want %q", early, want)
		}
		if len(final) != 0 {
			t.Errorf("final Set-Cookie %q, want none", final)
		}
		if _, _, body := get(t, "", pathURL+"/whoami"); body != `cookie="" auth="" key=""` {
			t.Errorf("what reached the app: %s", body)
		}
	})
}
