package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

var (
	webserverOnce sync.Once
	webserverPath string
	webserverErr  error
)

// webserver builds testdata/webserver (static) once per run.
func webserver(t testing.TB) string {
	t.Helper()
	webserverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "paddock-webserver-")
		if err != nil {
			webserverErr = err
			return
		}
		webserverPath = filepath.Join(dir, "webserver")
		cmd := exec.Command("go", "build", "-trimpath", "-o", webserverPath, "./testdata/webserver")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			webserverErr = fmt.Errorf("build the web server: %v: %s", err, out)
		}
	})
	if webserverErr != nil {
		t.Fatal(webserverErr)
	}
	return webserverPath
}

// previewSandbox is a running runtime with the test web server on port
// 8080 inside it.
type previewSandbox struct {
	env    *servertest.Env
	sdk    *pc.Client
	rid    string
	rtPath string
	host   string // the preview host of port 8080, with the server's port
	path   string // the path URL of port 8080
}

// startPreviewSandbox starts it; idle, when not zero, is the runtime's
// idle timeout in seconds.
func startPreviewSandbox(t testing.TB, idle int) *previewSandbox {
	t.Helper()
	env, _, p, rtPath := dockerEnv(t)
	if idle > 0 {
		env.Must(t, 200, "PATCH", rtPath, map[string]int{"idle_timeout_seconds": idle})
	}
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	installWebserver(t, sdk, p.RuntimeID)
	s := &previewSandbox{env: env, sdk: sdk, rid: p.RuntimeID, rtPath: rtPath,
		host: "8080-" + api.ShortID(p.RuntimeID) + ".localhost:" + portOfURL(env.URL),
		path: rtPath + "/ports/8080"}
	// Until the server listens (a loaded machine starts it slowly).
	testenv.Eventually(t, func() error {
		var ports pc.List[pc.Port]
		env.Must(t, 200, "GET", rtPath+"/previews", nil).Decode(t, &ports)
		if len(ports.Items) != 1 || ports.Items[0].Port != 8080 || !ports.Items[0].Listening {
			return fmt.Errorf("the web server does not listen: ports %+v", ports.Items)
		}
		if ports.Items[0].URL != "http://"+s.host+"/" {
			t.Fatalf("preview URL %q, want http://%s/", ports.Items[0].URL, s.host)
		}
		return nil
	})
	return s
}

// installWebserver copies the test web server into a running runtime and
// starts it on port 8080.
func installWebserver(t testing.TB, sdk *pc.Client, rid string) {
	t.Helper()
	ctx := t.Context()
	bin, err := os.Open(webserver(t))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	if _, err := sdk.WriteFile(ctx, "acme", "dev", rid, "/workspace/webserver", bin, pc.WriteFileOptions{Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"/workspace/webserver"}, Background: true}); err != nil {
		t.Fatal(err)
	}
}

func portOfURL(u string) string { return u[strings.LastIndex(u, ":")+1:] }

// loopbackClient is an HTTP client that reaches every host (*.localhost
// preview hosts) on 127.0.0.1, as browsers and curl do, without asking
// any DNS server.
func loopbackClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}}
}

// curl runs the curl binary and returns its stdout.
func curl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "curl", append([]string{"-sS", "--max-time", "60"}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("curl %q: %v: %s", args, err, stderr)
	}
	return string(out)
}

// TestPreviewURLs: a server in a sandbox with no network is reached at
// its preview URL and its path URL, with real clients: curl (HTTP/1.1,
// HTTP/2, server-sent events, a large upload), a WebSocket client; private
// until a key or a preview token is shown, or the port is made public;
// paddock's credentials never reach the app.
func TestPreviewURLs(t *testing.T) {
	s := startPreviewSandbox(t, 0)
	auth := "Authorization: Bearer " + s.env.Key
	u := "http://" + s.host

	// Both URLs, with an API key.
	if out := curl(t, "-H", auth, u+"/"); !strings.Contains(out, "hello from the sandbox (HTTP/1.1 "+s.host+")") {
		t.Fatalf("preview URL: %s", out)
	}
	if out := curl(t, "-H", auth, s.env.URL+s.path+"/"); !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("path URL: %s", out)
	}
	if out := curl(t, "-H", auth, "-w", "%{http_version}", "-o", "/dev/null", "--http2-prior-knowledge", u+"/"); out != "2" {
		t.Fatalf("HTTP/2: version %q", out)
	}
	// The app's own token parameter is the app's.
	if out := curl(t, "-H", auth, u+"/whoami?token=x"); !strings.Contains(out, `auth="" cookie="" token="x"`) {
		t.Fatalf("what reached the app: %s", out)
	}

	// Private: nothing without credentials, not found for another org.
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", u+"/"); code != "401" {
		t.Fatalf("no credentials: %s", code)
	}
	if page := curl(t, "-H", "Accept: text/html", u+"/"); !strings.Contains(page, "preview_needs_credentials") || !strings.Contains(page, "<html>") {
		t.Fatalf("the error page: %s", page)
	}
	s.env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "other"})
	s.env.Must(t, 201, "POST", "/api/v1/org/other/members", pc.AddOrgMemberRequest{Member: "eve@example.com", Role: "owner"})
	var eve pc.CreatedKey
	s.env.Must(t, 201, "POST", "/api/v1/org/other/keys", pc.CreateKeyRequest{Member: "eve@example.com"}).Decode(t, &eve)
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+eve.Key, u+"/"); code != "404" {
		t.Fatalf("another org's key: %s", code)
	}
	// Its running runtime answers her byte for byte as one that does not
	// exist.
	answer := func(host string) string {
		req, err := http.NewRequestWithContext(t.Context(), "GET", s.env.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+eve.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		id := resp.Header.Get("X-Request-Id")
		resp.Header.Del("X-Request-Id")
		resp.Header.Del("Date")
		var hdr bytes.Buffer
		if err := resp.Header.Write(&hdr); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d\n%s\n%s", resp.StatusCode, hdr.String(), strings.ReplaceAll(string(body), id, "REQUEST-ID"))
	}
	if foreign, unknown := answer(s.host), answer("8080-0123456789ab.localhost:"+portOfURL(s.env.URL)); foreign != unknown || strings.Contains(foreign, s.rid) {
		t.Fatalf("another org's running runtime answers\n%s\nwhere one that does not exist answers\n%s", foreign, unknown)
	}

	// A preview token: as a header, and as ?token= in a browser, which
	// sets a cookie and drops the token from the URL.
	var tok pc.PreviewToken
	s.env.Must(t, 201, "POST", s.rtPath+"/previews/8080/token", pc.PreviewTokenRequest{TTL: "10m"}).Decode(t, &tok)
	if out := curl(t, "-H", "X-Paddock-Preview-Token: "+tok.Token, u+"/"); !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("token header: %s", out)
	}
	jar := filepath.Join(t.TempDir(), "cookies")
	final := curl(t, "-L", "-c", jar, "-b", jar, "-H", "Accept: text/html", "-w", "\n%{url_effective}", tok.URL)
	if !strings.Contains(final, "hello from the sandbox") || !strings.HasSuffix(final, u+"/") {
		t.Fatalf("a ?token= visit: %s", final)
	}
	if out := curl(t, "-b", jar, u+"/app.js"); !strings.Contains(out, "postMessage") {
		t.Fatalf("the cookie the visit set: %s", out)
	}
	// A preview token, and the cookie, are paddock's: the app sees neither.
	if out := curl(t, "-b", jar, u+"/whoami?token="+tok.Token); !strings.Contains(out, `auth="" cookie="" token=""`) {
		t.Fatalf("paddock's credentials reached the app: %s", out)
	}
	// A token for another port opens nothing.
	var tok2 pc.PreviewToken
	s.env.Must(t, 201, "POST", s.rtPath+"/previews/9090/token", nil).Decode(t, &tok2)
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "X-Paddock-Preview-Token: "+tok2.Token, u+"/"); code != "401" {
		t.Fatalf("another port's token: %s", code)
	}

	// Server-sent events arrive as they are sent: the second waits for
	// a request the test makes only after reading the first.
	sse := exec.CommandContext(t.Context(), "curl", "-sS", "-N", "-H", auth, u+"/sse")
	stdout, err := sse.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	if l, err := lines.ReadString('\n'); err != nil || l != "data: one\n" {
		t.Fatalf("first event %q, %v", l, err)
	}
	curl(t, "-H", auth, u+"/release")
	rest, _ := io.ReadAll(lines)
	if err := sse.Wait(); err != nil || !strings.Contains(string(rest), "data: two") {
		t.Fatalf("the rest of the events %q, %v", rest, err)
	}

	// A WebSocket, with a client library.
	ctx := t.Context()
	c, _, err := websocket.Dial(ctx, "ws://"+s.host+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + s.env.Key}},
		HTTPClient: loopbackClient(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"first", "second"} {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil || string(b) != "echo: "+msg {
			t.Fatalf("echo %q, %v", b, err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")

	// A large upload streams through (64 MiB).
	blob := bytes.Repeat([]byte("paddock!"), 8<<20)
	file := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(file, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(blob)
	if out := curl(t, "-H", auth, "--data-binary", "@"+file, u+"/upload"); out != fmt.Sprintf("%d %s\n", len(blob), hex.EncodeToString(sum[:])) {
		t.Fatalf("upload: %s", out)
	}

	// Without credentials, a runtime that does not exist looks private.
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "http://8080-000000000000.localhost:"+portOfURL(s.env.URL)+"/"); code != "401" {
		t.Fatalf("an unknown runtime without credentials: %s", code)
	}
	// The app sets no cookie of paddock's.
	if hdr := curl(t, "-D", "-", "-o", "/dev/null", "-H", auth, u+"/setcookie"); strings.Contains(hdr, "paddock_preview") || !strings.Contains(hdr, "app=1") {
		t.Fatalf("the app's cookies: %s", hdr)
	}
	// A path URL runs its pages sandboxed, away from the API's origin, and
	// sets no cookie there.
	if hdr := curl(t, "-D", "-", "-o", "/dev/null", "-H", "Accept: text/html", s.env.URL+s.path+"/?token="+tok.Token); !strings.Contains(hdr, "Content-Security-Policy: sandbox") || strings.Contains(hdr, "Set-Cookie") {
		t.Fatalf("a path URL's answer: %s", hdr)
	}

	// A token, and the streams it opened, live no longer than its maker's
	// key.
	s.env.Must(t, 201, "POST", "/api/v1/org/acme/members", pc.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"})
	s.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", pc.AddMemberRequest{Member: "bob@example.com"})
	var bob pc.CreatedKey
	s.env.Must(t, 201, "POST", "/api/v1/org/acme/keys", pc.CreateKeyRequest{Member: "bob@example.com"}).Decode(t, &bob)
	var bobTok pc.PreviewToken
	s.env.MustKey(t, bob.Key, 201, "POST", s.rtPath+"/previews/8080/token", nil).Decode(t, &bobTok)
	ws, _, err := websocket.Dial(ctx, "ws://"+s.host+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"X-Paddock-Preview-Token": {bobTok.Token}},
		HTTPClient: loopbackClient(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	s.env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil)
	readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := ws.Read(readCtx); err == nil || readCtx.Err() != nil {
		t.Fatalf("the WebSocket of a revoked key's token is still open: %v", err)
	}
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "X-Paddock-Preview-Token: "+bobTok.Token, u+"/"); code != "401" {
		t.Fatalf("a revoked key's token: %s", code)
	}

	// A public port needs nothing; the CLI manages it.
	cli := clitest.Env(s.env.URL, s.env.Key)
	cli["PADDOCK_ORG"], cli["PADDOCK_WS"] = "acme", "dev"
	clitest.MustRun(t, cli, "port", "public", "p1", "8080")
	if out := curl(t, u+"/"); !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("public port: %s", out)
	}
	if out := clitest.MustRun(t, cli, "port", "ls", "p1"); !strings.Contains(out, "8080") || !strings.Contains(out, "true") || !strings.Contains(out, "webserver") || !strings.Contains(out, u+"/") {
		t.Fatalf("port ls:\n%s", out)
	}
	clitest.MustRun(t, cli, "port", "private", "p1", "8080")
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", u+"/"); code != "401" {
		t.Fatalf("private again: %s", code)
	}
	link := strings.TrimSpace(clitest.MustRun(t, cli, "port", "url", "p1", "8080", "--ttl", "5m"))
	if out := curl(t, link); !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("port url %s: %s", link, out)
	}
}

// TestPreviewCookies: an app cannot set or shadow paddock's cookies in
// any spelling a browser reads as theirs (RFC 6265: the name trimmed of
// spaces and tabs; a nameless cookie), nor in another case, while its own
// cookies pass; a path URL, on the API's origin, neither sets the app's
// cookies nor hands the app the browser's. curl's cookie jar, which reads
// Set-Cookie as browsers do, stands for the browser.
func TestPreviewCookies(t *testing.T) {
	s := startPreviewSandbox(t, 0)
	auth := "Authorization: Bearer " + s.env.Key
	u := "http://" + s.host
	var tok pc.PreviewToken
	s.env.Must(t, 201, "POST", s.rtPath+"/previews/8080/token", pc.PreviewTokenRequest{TTL: "10m"}).Decode(t, &tok)
	jar := filepath.Join(t.TempDir(), "cookies")
	curl(t, "-L", "-c", jar, "-b", jar, "-H", "Accept: text/html", "-o", "/dev/null", tok.URL)

	hdr := curl(t, "-D", "-", "-o", "/dev/null", "-c", jar, "-b", jar, u+"/setcookies")
	var set []string
	for _, l := range strings.Split(hdr, "\n") {
		if name, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && strings.EqualFold(name, "Set-Cookie") {
			set = append(set, strings.TrimSpace(v))
		}
	}
	if slices.ContainsFunc(set, func(v string) bool { return strings.Contains(strings.ToLower(v), "paddock_preview") }) ||
		!slices.Contains(set, "app=1; Path=/") || !slices.Contains(set, "app_two =2; Path=/") {
		t.Fatalf("the app's Set-Cookie lines that reached the client: %q", set)
	}
	// The jar still holds paddock's cookie as the visit set it, and the
	// app's own; the cookie still opens the preview, and the app sees
	// only its own cookies.
	kept, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kept), "planted") || !strings.Contains(string(kept), "paddock_preview\t"+tok.Token) {
		t.Fatalf("the cookie jar:\n%s", kept)
	}
	out := curl(t, "-b", jar, u+"/whoami")
	if !strings.Contains(out, "app=1") || !strings.Contains(out, "app_two=2") || strings.Contains(out, "paddock") {
		t.Fatalf("what reached the app: %s", out)
	}

	// A path URL: no Set-Cookie, and no Cookie to the app.
	pathURL := s.env.URL + s.path
	if hdr := curl(t, "-D", "-", "-o", "/dev/null", "-H", auth, pathURL+"/setcookies"); strings.Contains(strings.ToLower(hdr), "set-cookie") {
		t.Fatalf("a path URL passed the app's cookies on the API's origin:\n%s", hdr)
	}
	if out := curl(t, "-H", auth, "-b", "app=1; paddock_preview="+tok.Token+"; other=2", pathURL+"/whoami"); !strings.Contains(out, `cookie=""`) {
		t.Fatalf("a path URL passed the browser's cookies to the app: %s", out)
	}
}

// TestPreviewWakes: traffic wakes a paused runtime and counts as
// activity; a port nobody listens on gets a page that says so.
func TestPreviewWakes(t *testing.T) {
	// A 10 s idle timeout: the row's expiry moves once activity is a
	// second (a tenth) ahead of it.
	s := startPreviewSandbox(t, 10)
	auth := "Authorization: Bearer " + s.env.Key
	u := "http://" + s.host

	var before pc.Runtime
	s.env.Must(t, 200, "GET", s.rtPath, nil).Decode(t, &before)
	var row pc.Sandbox
	s.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+before.CurrentSandboxID, nil).Decode(t, &row)
	if row.ExpiresAt == nil {
		t.Fatal("a running runtime with an idle timeout has no expiry")
	}
	// Proxied traffic moves the expiry once it would move it a second or
	// more (a tenth of the timeout) later: send some until then.
	testenv.Eventually(t, func() error {
		curl(t, "-H", auth, u+"/")
		var after pc.Sandbox
		s.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+before.CurrentSandboxID, nil).Decode(t, &after)
		if after.ExpiresAt == nil || !after.ExpiresAt.After(*row.ExpiresAt) {
			return fmt.Errorf("proxied traffic did not extend the expiry: %v → %v", row.ExpiresAt, after.ExpiresAt)
		}
		return nil
	})

	s.env.Must(t, 200, "POST", s.rtPath+"/pause", nil)
	if out := curl(t, "-H", auth, u+"/"); !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("a paused runtime's preview: %s", out)
	}
	var rt pc.Runtime
	s.env.Must(t, 200, "GET", s.rtPath, nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeRunning {
		t.Fatalf("the request did not wake the runtime: %s", rt.Status)
	}

	// Nothing listens on 9090: the page says so.
	page := curl(t, "-H", auth, "-H", "Accept: text/html", "-w", "%{http_code}", "http://9090-"+api.ShortID(s.rid)+".localhost:"+portOfURL(s.env.URL)+"/")
	if !strings.Contains(page, "port_not_listening") || !strings.HasSuffix(page, "503") {
		t.Fatalf("a port nobody listens on: %s", page)
	}
	// An unknown runtime.
	if code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", auth, "http://8080-000000000000.localhost:"+portOfURL(s.env.URL)+"/"); code != "404" {
		t.Fatalf("an unknown runtime: %s", code)
	}
}

// TestPreviewInABrowser: a real headless Chromium loads a page that embeds
// a private preview in an iframe with a token. The app's own script (a
// second request, which only the cookie the token's visit set can
// authorize) reports to the page. Chromium is kept off the network: its
// proxy is a closed local port, which only loopback hosts bypass.
func TestPreviewInABrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (scripts/setup-host.sh installs it)")
	}
	s := startPreviewSandbox(t, 0)
	var tok pc.PreviewToken
	s.env.Must(t, 201, "POST", s.rtPath+"/previews/8080/token", nil).Decode(t, &tok)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><body><div id="out">no message</div>
<iframe src="%s"></iframe>
<script>window.addEventListener("message", function (e) { document.getElementById("out").textContent = "got: " + e.data; });</script>
</body></html>`, html.EscapeString(tok.URL))
	}))
	defer page.Close()
	// On localhost, the page and the preview are the same site, as an
	// app's own console embedding its previews would be.
	pageURL := "http://localhost:" + portOfURL(page.URL) + "/"

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(),
		"--proxy-server=http://127.0.0.1:9", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
		"--virtual-time-budget=20000", "--dump-dom", pageURL)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "got: app loaded: sandbox app") {
		t.Fatalf("the page did not hear from the app in its iframe:\n%s", out)
	}
}

// TestPreviewWebSocketKeepsAwake: an open WebSocket through a preview is
// activity for as long as it is open: the runtime does not expire under
// it, and does once it closes.
func TestPreviewWebSocketKeepsAwake(t *testing.T) {
	e := newLifeEnv(t, servertest.Options{})
	rid := e.project(t, "p1", pc.RuntimeConfig{IdleTimeoutSeconds: 60})
	e.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+rid+"/start", nil)
	installWebserver(t, e.sdk, rid)
	host := "8080-" + api.ShortID(rid) + ".localhost:" + portOfURL(e.env.URL)
	ctx := t.Context()
	var c *websocket.Conn
	testenv.Eventually(t, func() (err error) {
		c, _, err = websocket.Dial(ctx, "ws://"+host+"/ws", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + e.env.Key}},
			HTTPClient: loopbackClient(),
		})
		return err
	})
	e.clock.Advance(2 * time.Hour)
	e.tick(t)
	e.wantStatus(t, rid, pc.RuntimeRunning)
	if err := c.Write(ctx, websocket.MessageText, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "echo: still here" {
		t.Fatalf("echo %q, %v", b, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	// Once the server has seen it close, the runtime idles out.
	testenv.WaitFor(t, "the runtime to idle out after its WebSocket closed", func() bool {
		e.clock.Advance(2 * time.Hour)
		e.tick(t)
		return e.runtime(t, rid).Status == pc.RuntimePaused
	})
}
