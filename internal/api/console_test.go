package api_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// browser is what a browser holds of a console sign-in: the cookie (named
// name, else paddock_console), which it sends with every request to the
// server, and the CSRF token the console's script read from the
// sign-in's answer.
type browser struct {
	env    *servertest.Env
	cookie string
	csrf   string
	name   string
}

// do sends a request as the browser: the cookie, and on unsafe methods
// the CSRF token and the server's origin (a browser's fetch sends Origin
// on them). hdr are header name and value pairs that take their place
// ("" drops one).
func (b *browser) do(t *testing.T, method, path string, body any, hdr ...string) (servertest.Response, *http.Response) {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.env.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: cmp.Or(b.name, "paddock_console"), Value: b.cookie})
	}
	if method != "GET" && method != "HEAD" {
		req.Header.Set(api.CSRFHeader, b.csrf)
		req.Header.Set("Origin", b.env.URL)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Del(hdr[i])
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Response{Status: resp.StatusCode, Body: out}, resp
}

// consoleCookie is the console's cookie an answer sets (by either of its
// names), or nil.
func consoleCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "paddock_console" || c.Name == "__Host-paddock_console" {
			return c
		}
	}
	return nil
}

// consoleSignIn signs in to the console with body and returns the browser
// that holds the session; the answer must be 201 with the cookie.
func consoleSignIn(t *testing.T, env *servertest.Env, body any) *browser {
	t.Helper()
	b := &browser{env: env}
	r, resp := b.do(t, "POST", "/api/v1/console/session", body)
	if r.Status != 201 {
		t.Fatalf("console sign-in: %d %s", r.Status, r.Body)
	}
	var s client.ConsoleSession
	r.Decode(t, &s)
	c := consoleCookie(resp)
	if c == nil || c.Value == "" || s.CSRFToken == "" {
		t.Fatalf("console sign-in set cookie %v, answered %s", c, r.Body)
	}
	if bytes.Contains(r.Body, []byte(c.Value)) {
		t.Fatal("the sign-in's answer shows the session token to the page")
	}
	b.cookie, b.csrf = c.Value, s.CSRFToken
	return b
}

// consoleMember adds handle to org acme with role, in workspace dev, and
// returns a key of theirs.
func consoleMember(t *testing.T, env *servertest.Env, handle, role string) client.CreatedKey {
	t.Helper()
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: handle, Role: role})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: handle})
	return keyFor(t, env, client.CreateKeyRequest{Member: handle})
}

// TestConsoleServed: every GET path that is not the API's answers the
// console's index (the build, or the placeholder without one) under the
// console's Content-Security-Policy; the API's paths keep their JSON.
func TestConsoleServed(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	rec := httptest.NewRecorder()
	console.New().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	index := rec.Body.Bytes()
	if len(index) == 0 {
		t.Fatal("the console serves no index")
	}
	anon := &browser{env: env}
	for _, path := range []string{"/", "/o/acme/w/dev/runtimes", "/o/acme/w/dev/runtimes/x/terminal", "/signin"} {
		r, resp := anon.do(t, "GET", path, nil)
		if r.Status != 200 || !bytes.Equal(r.Body, index) {
			t.Errorf("GET %s: %d, index %v", path, r.Status, bytes.Equal(r.Body, index))
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != console.Policy {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
	}
	if r, resp := anon.do(t, "HEAD", "/", nil); r.Status != 200 || resp.Header.Get("Content-Security-Policy") != console.Policy {
		t.Errorf("HEAD /: %d %v", r.Status, resp.Header)
	}
	// The API's own paths answer as the API.
	for _, c := range []struct{ method, path, code string }{
		{"GET", "/api/v1/nothing", "route_not_found"},
		{"GET", "/api", "route_not_found"},
		{"GET", "/metrics/x", "route_not_found"},
		{"POST", "/", "route_not_found"},
		{"GET", "/api/v1/me", "missing_api_key"},
	} {
		r, resp := anon.do(t, c.method, c.path, nil)
		if r.Code() != c.code || resp.Header.Get("Content-Security-Policy") != "" {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if r, _ := anon.do(t, "GET", "/health", nil); r.Status != 200 || !json.Valid(r.Body) {
		t.Errorf("GET /health: %d %s", r.Status, r.Body)
	}
}

// TestConsoleKeySession: a console sign-in with a key sets an HttpOnly,
// SameSite=Strict, host-only cookie; the cookie alone then authenticates
// as the key; unsafe methods need the session's CSRF token, every request
// the cookie carries a same origin, and an Authorization header wins.
func TestConsoleKeySession(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")

	b := &browser{env: env}
	r, resp := b.do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Key: ann.Key})
	if r.Status != 201 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	c := consoleCookie(resp)
	switch {
	case c == nil:
		t.Fatal("no cookie")
	case !c.HttpOnly, c.SameSite != http.SameSiteStrictMode, c.Path != "/", c.Domain != "", c.Secure:
		t.Fatalf("cookie attributes: %s", resp.Header.Get("Set-Cookie"))
	case c.MaxAge <= 0 || c.MaxAge > int((24*time.Hour).Seconds()):
		t.Fatalf("cookie max age %d", c.MaxAge)
	}
	var s client.ConsoleSession
	r.Decode(t, &s)
	b.cookie, b.csrf = c.Value, s.CSRFToken

	// The cookie alone: the key's principal.
	var me client.Me
	r, _ = b.do(t, "GET", "/api/v1/me", nil)
	r.Decode(t, &me)
	if r.Status != 200 || me.Credential != "key:"+ann.ID {
		t.Fatalf("me by cookie: %d %s", r.Status, r.Body)
	}
	var again client.ConsoleSession
	r, _ = b.do(t, "GET", "/api/v1/console/session", nil)
	r.Decode(t, &again)
	if again.CSRFToken != s.CSRFToken || !again.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("session %+v, signed in with %+v", again, s)
	}

	// CSRF and origin.
	mkKey := client.CreateKeyRequest{Name: "more"}
	wantError(t, first(b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, api.CSRFHeader, "")), 403, "csrf_token_invalid")
	wantError(t, first(b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, api.CSRFHeader, s.CSRFToken+"x")), 403, "csrf_token_invalid")
	wantError(t, first(b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Origin", "http://evil.example")), 403, "origin_not_allowed")
	wantError(t, first(b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Origin", "null")), 403, "origin_not_allowed")
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Origin", "http://evil.example")), 403, "origin_not_allowed")
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Upgrade", "websocket", "Connection", "Upgrade")), 403, "origin_not_allowed")
	if r, _ := b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Origin", env.URL); r.Status != 201 {
		t.Fatalf("same origin, with the token: %d %s", r.Status, r.Body)
	}
	// Sec-Fetch-Site, when sent, says same-origin or none, whatever the
	// method: a same-site page's GET (an <img> or a no-cors fetch) may
	// not use the cookie.
	for _, site := range []string{"same-site", "cross-site", "bogus"} {
		wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Sec-Fetch-Site", site)), 403, "origin_not_allowed")
		wantError(t, first(b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Sec-Fetch-Site", site)), 403, "origin_not_allowed")
	}
	for _, site := range []string{"same-origin", "none"} {
		if r, _ := b.do(t, "GET", "/api/v1/me", nil, "Sec-Fetch-Site", site); r.Status != 200 {
			t.Fatalf("Sec-Fetch-Site %s: %d %s", site, r.Status, r.Body)
		}
	}
	if r, _ := b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Sec-Fetch-Site", "same-origin"); r.Status != 201 {
		t.Fatalf("Sec-Fetch-Site same-origin, with the token: %d %s", r.Status, r.Body)
	}
	// Only the cookie is held to it: a bearer key is not a browser's.
	if r := env.DoKey(t, ann.Key, "GET", "/api/v1/me", nil); r.Status != 200 {
		t.Fatalf("bearer: %d %s", r.Status, r.Body)
	}
	if r, _ := (&browser{env: env}).do(t, "GET", "/api/v1/me", nil, "Authorization", "Bearer "+ann.Key, "Sec-Fetch-Site", "cross-site"); r.Status != 200 {
		t.Fatalf("bearer, cross-site: %d %s", r.Status, r.Body)
	}
	// An Authorization header wins: the cookie is not read, and a bearer
	// needs no CSRF token.
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Authorization", "Bearer pdk_nothing")), 401, "invalid_api_key")
	if r, _ := b.do(t, "POST", "/api/v1/org/acme/keys", mkKey, "Authorization", "Bearer "+ann.Key, api.CSRFHeader, ""); r.Status != 201 {
		t.Fatalf("bearer beside the cookie: %d %s", r.Status, r.Body)
	}
}

// TestConsoleSessionEnds: a key's console session ends at sign-out (and
// its cookie is cleared; it must come with the server's Origin), at a new sign-in in the same browser, when the
// key is revoked, when the key expires and when the session's own time is
// up; the key outlives its sessions.
func TestConsoleSessionEnds(t *testing.T) {
	env, clock := identityEnv(t, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})

	// Sign-out: at once, and the cookie is cleared.
	wantError(t, first(b.do(t, "DELETE", "/api/v1/console/session", nil, api.CSRFHeader, "")), 403, "csrf_token_invalid")
	// and from the server's own page: with its Origin (or Sec-Fetch-Site
	// same-origin).
	wantError(t, first(b.do(t, "DELETE", "/api/v1/console/session", nil, "Origin", "")), 403, "origin_not_allowed")
	wantError(t, first(b.do(t, "DELETE", "/api/v1/console/session", nil, "Origin", "", "Sec-Fetch-Site", "same-site")), 403, "origin_not_allowed")
	if r, _ := b.do(t, "GET", "/api/v1/me", nil); r.Status != 200 {
		t.Fatalf("a refused sign-out ended the session: %d %s", r.Status, r.Body)
	}
	r, resp := b.do(t, "DELETE", "/api/v1/console/session", nil)
	if c := consoleCookie(resp); r.Status != 204 || c == nil || c.MaxAge >= 0 {
		t.Fatalf("sign-out: %d %v", r.Status, resp.Header.Values("Set-Cookie"))
	}
	r, resp = b.do(t, "GET", "/api/v1/me", nil)
	wantError(t, r, 401, "invalid_session")
	if c := consoleCookie(resp); c == nil || c.MaxAge >= 0 {
		t.Fatalf("a refused cookie is not cleared: %v", resp.Header.Values("Set-Cookie"))
	}
	env.MustKey(t, ann.Key, 200, "GET", "/api/v1/me", nil) // the key lives on

	// A new sign-in in the same browser ends the session it replaces.
	b = consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	again := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	nb := &browser{env: env, cookie: b.cookie}
	if r, resp := nb.do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Key: ann.Key}); r.Status != 201 || consoleCookie(resp) == nil {
		t.Fatalf("sign-in over an old cookie: %d %s", r.Status, r.Body)
	}
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_session")
	if r, _ := again.do(t, "GET", "/api/v1/me", nil); r.Status != 200 {
		t.Fatalf("another browser's session: %d %s", r.Status, r.Body)
	}

	// The key revoked: its session goes with it.
	b = consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+ann.ID, nil)
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_api_key")

	// The key's expiry, and the session's own.
	short := keyFor(t, env, client.CreateKeyRequest{Member: "ann@example.com", ExpiresIn: "1h"})
	b = consoleSignIn(t, env, client.ConsoleSessionRequest{Key: short.Key})
	var s client.ConsoleSession
	r, _ = b.do(t, "GET", "/api/v1/console/session", nil)
	r.Decode(t, &s)
	if want := clock.Now().Add(time.Hour); !s.ExpiresAt.Equal(want) {
		t.Fatalf("a session of a key that expires at %s ends at %s", want, s.ExpiresAt)
	}
	long := keyFor(t, env, client.CreateKeyRequest{Member: "ann@example.com"})
	lb := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: long.Key})
	clock.Advance(time.Hour)
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_session")
	env.MustKey(t, long.Key, 200, "GET", "/api/v1/me", nil)
	clock.Advance(23 * time.Hour)
	wantError(t, first(lb.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_session")
}

func first(r servertest.Response, _ *http.Response) servertest.Response { return r }

// TestConsoleRoles: the cookie carries the key's role, asked of the same
// Authorize: a viewer's session reads and may not start a runtime.
func TestConsoleRoles(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	vic := consoleMember(t, env, "vic@example.com", "viewer")
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	rt := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID

	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: vic.Key})
	if r, _ := b.do(t, "GET", rt, nil); r.Status != 200 {
		t.Fatalf("a viewer reads its runtime: %d %s", r.Status, r.Body)
	}
	wantError(t, first(b.do(t, "POST", rt+"/start", nil)), 403, "role_too_low")
	wantError(t, first(b.do(t, "GET", "/api/v1/org/other", nil)), 404, "org_not_found")
	wantError(t, first(b.do(t, "GET", "/api/v1/org/acme/ws/ops", nil)), 404, "workspace_not_found")
}

// TestConsoleWalletSession: a wallet's answer to a challenge signs in to
// the console as the wallet's user, with the user's memberships; signing
// out ends it.
func TestConsoleWalletSession(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	addr, sign := mustWallet(t, hardhatKey)
	env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: addr, Role: "admin"})
	var ch client.AuthChallenge
	env.MustKey(t, "", 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &ch)

	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)})
	var me client.Me
	r, _ := b.do(t, "GET", "/api/v1/me", nil)
	r.Decode(t, &me)
	if r.Status != 200 || !strings.HasPrefix(me.Credential, "session:") || len(me.Memberships) != 1 || me.Memberships[0].Role != "admin" {
		t.Fatalf("me by a wallet's cookie: %d %s", r.Status, r.Body)
	}
	if r, _ := b.do(t, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "web"}); r.Status != 201 {
		t.Fatalf("an admin's cookie makes a workspace: %d %s", r.Status, r.Body)
	}
	// The same answer again: the nonce is spent.
	wantError(t, first((&browser{env: env}).do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)})), 401, "invalid_challenge")

	if r, _ := b.do(t, "DELETE", "/api/v1/console/session", nil); r.Status != 204 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_session")
}

// TestConsoleSignInRefusals: bad bodies are 400 with a code, bad keys and
// cookies 401, another origin, or none without Sec-Fetch-Site
// same-origin, 403; a bearer credential has no console
// session to read or end.
func TestConsoleSignInRefusals(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	anon := &browser{env: env}
	for _, c := range []struct {
		name   string
		body   any
		hdr    []string
		status int
		code   string
	}{
		{"empty", `{}`, nil, 400, "invalid_console_sign_in"},
		{"both forms", `{"key":"pdk_x","nonce":"n","signature":"0x00"}`, nil, 400, "invalid_console_sign_in"},
		{"unknown field", `{"token":"x"}`, nil, 400, "unknown_field"},
		{"not JSON", `{"key":`, nil, 400, "malformed_json"},
		{"not a key", `{"key":"hunter2"}`, nil, 401, "invalid_api_key"},
		{"unknown key", `{"key":"pdk_000000000000000000000000000000000000000000000000"}`, nil, 401, "invalid_api_key"},
		{"unknown nonce", `{"nonce":"0123","signature":"0x00"}`, nil, 401, "invalid_challenge"},
		{"other origin", client.ConsoleSessionRequest{Key: env.Key}, []string{"Origin", "http://evil.example"}, 403, "origin_not_allowed"},
		{"no origin", client.ConsoleSessionRequest{Key: env.Key}, []string{"Origin", ""}, 403, "origin_not_allowed"},
		{"null origin", client.ConsoleSessionRequest{Key: env.Key}, []string{"Origin", "null"}, 403, "origin_not_allowed"},
		{"same-site, no origin", client.ConsoleSessionRequest{Key: env.Key}, []string{"Origin", "", "Sec-Fetch-Site", "same-site"}, 403, "origin_not_allowed"},
		{"same-site", client.ConsoleSessionRequest{Key: env.Key}, []string{"Sec-Fetch-Site", "same-site"}, 403, "origin_not_allowed"},
		{"none", client.ConsoleSessionRequest{Key: env.Key}, []string{"Origin", "", "Sec-Fetch-Site", "none"}, 403, "origin_not_allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, resp := anon.do(t, "POST", "/api/v1/console/session", c.body, c.hdr...)
			wantError(t, r, c.status, c.code)
			if consoleCookie(resp) != nil {
				t.Fatal("a refused sign-in set the cookie")
			}
		})
	}
	// The console's own fetch: Origin, or no Origin with Sec-Fetch-Site
	// same-origin.
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", "", "Sec-Fetch-Site", "same-origin"}} {
		if r, _ := anon.do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Key: env.Key}, hdr...); r.Status != 201 {
			t.Fatalf("sign-in with %q: %d %s", hdr, r.Status, r.Body)
		}
	}
	for _, cookie := range []string{"x", "v4.local.AAAA", "pdk_000000000000000000000000000000000000000000000000"} {
		b := &browser{env: env, cookie: cookie}
		wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 401, "invalid_session")
	}
	wantError(t, env.Do(t, "GET", "/api/v1/console/session", nil), 404, "console_session_not_found")
	wantError(t, env.Do(t, "DELETE", "/api/v1/console/session", nil), 404, "console_session_not_found")
	wantError(t, env.DoKey(t, "", "GET", "/api/v1/console/session", nil), 401, "missing_api_key")
}

// TestConsoleBehindTLSProxy: behind a proxy that ends TLS (users reach the
// server over https: preview_scheme), the console's https Origin is the
// server's own and no other: an http Origin of the same host is refused.
// The cookie is Secure and named __Host-paddock_console, which no other
// host can set; only that name is read, and the plain name is not.
func TestConsoleBehindTLSProxy(t *testing.T) {
	env := servertest.New(t, servertest.Options{Preview: api.Preview{Scheme: "https"}})
	own := "https://" + strings.TrimPrefix(env.URL, "http://")
	anon := &browser{env: env}
	signIn := client.ConsoleSessionRequest{Key: env.Key}
	wantError(t, first(anon.do(t, "POST", "/api/v1/console/session", signIn, "Origin", env.URL)), 403, "origin_not_allowed")
	wantError(t, first(anon.do(t, "POST", "/api/v1/console/session", signIn, "Origin", "https://evil.example")), 403, "origin_not_allowed")
	r, resp := anon.do(t, "POST", "/api/v1/console/session", signIn, "Origin", own)
	c := consoleCookie(resp)
	if r.Status != 201 || c == nil || c.Name != "__Host-paddock_console" || !c.Secure || !c.HttpOnly ||
		c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
		t.Fatalf("sign-in over https: %d %v", r.Status, resp.Header.Values("Set-Cookie"))
	}
	var s client.ConsoleSession
	r.Decode(t, &s)
	b := &browser{env: env, cookie: c.Value, csrf: s.CSRFToken, name: c.Name}
	if r, _ := b.do(t, "GET", "/api/v1/me", nil); r.Status != 200 {
		t.Fatalf("the __Host- cookie: %d %s", r.Status, r.Body)
	}
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Origin", env.URL)), 403, "origin_not_allowed")
	// The plain name, which a page of another host of the site could
	// set, is not read here.
	plain := &browser{env: env, cookie: c.Value, csrf: s.CSRFToken}
	wantError(t, first(plain.do(t, "GET", "/api/v1/me", nil)), 401, "missing_api_key")
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil, "Cookie", "__Host-paddock_console=x; __Host-paddock_console="+c.Value)), 401, "ambiguous_session_cookie")
	// Sign-out clears the __Host- cookie.
	r, resp = b.do(t, "DELETE", "/api/v1/console/session", nil, "Origin", own)
	if c := consoleCookie(resp); r.Status != 204 || c == nil || c.Name != "__Host-paddock_console" || c.MaxAge >= 0 || !c.Secure {
		t.Fatalf("sign-out over https: %d %v", r.Status, resp.Header.Values("Set-Cookie"))
	}
}

// TestConsoleCookieTossed: a page on another host of the same site (a
// preview app's, when previews live under the server's host) can set a
// paddock_console cookie with a parent Domain or a narrower Path that the
// browser sends beside, or before, the console's own. A request that
// carries the cookie twice is refused, whichever comes first, and clears
// nothing: neither session acts, neither ends, and the console is handed
// no CSRF token.
func TestConsoleCookieTossed(t *testing.T) {
	env, _ := identityEnv(t, api.Limits{})
	ann := consoleMember(t, env, "ann@example.com", "member")
	eve := consoleMember(t, env, "eve@example.com", "member")
	victim := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	attacker := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: eve.Key})
	both := "paddock_console=" + attacker.cookie + "; paddock_console=" + victim.cookie
	tossed := &browser{env: env, csrf: victim.csrf}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/me"},
		{"GET", "/api/v1/console/session"},
		{"POST", "/api/v1/org/acme/keys"},
		{"DELETE", "/api/v1/console/session"},
	} {
		r, resp := tossed.do(t, c.method, c.path, nil, "Cookie", both)
		wantError(t, r, 401, "ambiguous_session_cookie")
		if l := resp.Header.Values("Set-Cookie"); len(l) != 0 {
			t.Errorf("%s %s with the cookie twice sets %q", c.method, c.path, l)
		}
		if bytes.Contains(r.Body, []byte(attacker.csrf)) || bytes.Contains(r.Body, []byte(victim.csrf)) {
			t.Errorf("%s %s with the cookie twice answers a CSRF token: %s", c.method, c.path, r.Body)
		}
	}
	// A sign-in with the cookie twice ends neither session it cannot
	// attribute.
	if r, _ := tossed.do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Key: ann.Key}, "Cookie", both); r.Status != 201 {
		t.Fatalf("sign-in with the cookie twice: %d %s", r.Status, r.Body)
	}
	for _, b := range []*browser{victim, attacker} {
		if r, _ := b.do(t, "GET", "/api/v1/me", nil); r.Status != 200 {
			t.Fatalf("a session after the tossed requests: %d %s", r.Status, r.Body)
		}
	}
}

// TestConsoleRateLimited: a key's console session draws from the key's
// own bucket, as the key does: the cookie and the bearer key share it.
func TestConsoleRateLimited(t *testing.T) {
	const burst = 10 // the admin key's setup fits in it
	env, _ := identityEnv(t, api.Limits{PerKey: api.Rate{PerSecond: 0.001, Burst: burst}})
	ann := consoleMember(t, env, "ann@example.com", "member")
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: ann.Key})
	for i := range burst {
		var r servertest.Response
		if i%2 == 0 {
			r = env.DoKey(t, ann.Key, "GET", "/api/v1/me", nil)
		} else {
			r, _ = b.do(t, "GET", "/api/v1/me", nil)
		}
		if r.Status != 200 {
			t.Fatalf("request %d of the burst: %d %s", i, r.Status, r.Body)
		}
	}
	wantError(t, first(b.do(t, "GET", "/api/v1/me", nil)), 429, "rate_limited")
	wantError(t, env.DoKey(t, ann.Key, "GET", "/api/v1/me", nil), 429, "rate_limited")
}

// TestConsoleRefusalsLogged: the door logs a refused cookie as it logs a
// refused bearer credential, with why and the key's id, and a CSRF or
// origin refusal with its reason; never the token itself.
func TestConsoleRefusalsLogged(t *testing.T) {
	var logs testenv.Buffer
	env := servertest.New(t, servertest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var k client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/keys", client.CreateInstallationKeyRequest{Name: "console"}).Decode(t, &k)
	b := consoleSignIn(t, env, client.ConsoleSessionRequest{Key: k.Key})
	wantError(t, first(b.do(t, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "x"}, api.CSRFHeader, "")), 403, "csrf_token_invalid")
	wantError(t, first(b.do(t, "GET", "/api/v1/orgs", nil, "Origin", "http://evil.example")), 403, "origin_not_allowed")
	env.Must(t, 204, "DELETE", "/api/v1/keys/"+k.ID, nil)
	wantError(t, first(b.do(t, "GET", "/api/v1/orgs", nil)), 401, "invalid_api_key")
	wantError(t, first((&browser{env: env}).do(t, "POST", "/api/v1/console/session", client.ConsoleSessionRequest{Key: k.Key})), 401, "invalid_api_key")
	out := logs.String()
	for _, want := range []string{"reason=csrf_token_invalid", "reason=origin_not_allowed", "reason=revoked key_id=" + k.ID} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "reason=revoked key_id="+k.ID); n != 2 {
		t.Errorf("%d refusals of the revoked key logged, want 2 (its cookie and its sign-in):\n%s", n, out)
	}
	for _, secret := range []string{b.cookie, k.Key, b.csrf} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}
