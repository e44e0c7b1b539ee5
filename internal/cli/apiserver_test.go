package cli_test

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// fakeNow is where the API's clock stands until a test moves it.
const fakeNow = "2026-03-04T05:06:07Z"

// apiServer is the real API (servertest: the api handler over SQLite, the
// fake provider) on a clock that stands still at fakeNow, with a record of
// every request the CLI sent, so that a test holds the CLI's encoding to
// what it expects as well as the server's answer.
type apiServer struct {
	*servertest.Env
	Clock *testenv.Clock
	rec   *recorder
}

// startAPI starts the real API for one test; opts.Now and opts.Wrap are
// its own.
func startAPI(t *testing.T, opts servertest.Options) *apiServer {
	t.Helper()
	clock := testenv.NewClock(must(time.Parse(time.RFC3339, fakeNow)))
	rec := &recorder{}
	opts.Now, opts.Wrap = clock.Now, rec.wrap
	return &apiServer{Env: servertest.New(t, opts), Clock: clock, rec: rec}
}

// startScoped starts the real API with org acme and workspace dev made
// through the CLI, and returns it with an environment that names them.
func startScoped(t *testing.T, opts servertest.Options) (*apiServer, map[string]string) {
	t.Helper()
	a := startAPI(t, opts)
	env := clitest.Env(a.URL, a.Key)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	return a, env
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// body returns the JSON body of the last request the CLI sent to a route
// pattern ("POST /api/v1/orgs"), "" when it sent none or no JSON.
func (a *apiServer) body(pattern string) string {
	r, _ := a.rec.last(pattern)
	return r.body
}

// query returns the query of the last request to a route pattern.
func (a *apiServer) query(pattern string) string {
	r, _ := a.rec.last(pattern)
	return r.query
}

// requests counts the requests the server has had.
func (a *apiServer) requests() int {
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	return len(a.rec.seen)
}

// recorder keeps every request a server had, in order.
type recorder struct {
	mu   sync.Mutex
	seen []request
}

type request struct {
	method, path, query string
	body                string // a JSON body, else ""
	raw                 []byte // the body as sent
	contentType         string
}

// wrap records each request before h serves it.
func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		req := request{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, raw: b, contentType: r.Header.Get("Content-Type")}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
			req.body = strings.TrimSpace(string(b))
		}
		rec.mu.Lock()
		rec.seen = append(rec.seen, req)
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// last finds the last request that matches pattern.
func (rec *recorder) last(pattern string) (request, bool) {
	all := rec.sent(pattern)
	if len(all) == 0 {
		return request{}, false
	}
	return all[len(all)-1], true
}

// sent lists the requests that match pattern, in order, as a ServeMux
// holding only that pattern matches them.
func (rec *recorder) sent(pattern string) []request {
	mux := http.NewServeMux()
	mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []request
	for _, r := range rec.seen {
		req := httptest.NewRequest(r.method, r.path, nil)
		if _, p := mux.Handler(req); p == pattern {
			out = append(out, r)
		}
	}
	return out
}
