package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// TestUnmountedFeaturesHaveNoRoutes: a feature its component did not
// mount has no routes: each of its operations answers 404
// route_not_found, never 501, and mounting it adds exactly its routes.
func TestUnmountedFeaturesHaveNoRoutes(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bare := api.New(api.Config{Access: iam.New(iam.Config{Store: st}), Tenancy: tenancy.New(tenancy.Config{Store: st})})
	srv := httptest.NewServer(bare)
	t.Cleanup(srv.Close)
	core := routeSet(bare)
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, f := range []api.Feature{api.Metrics(nil), api.SignIn(nil), api.SSH(nil), api.Credits(nil), api.Capabilities(nil), api.Sessions(nil), api.Tasks(nil), api.Worlds(nil), api.Snapshots(nil), api.Hosts(nil), api.Workflows(nil), api.TemplateBuilds(nil), api.Events(nil, 0, 0), api.Instance(noInstance)} {
		t.Run(f.Name, func(t *testing.T) {
			with := api.New(api.Config{Tenancy: tenancy.New(tenancy.Config{})})
			with.Mount(f)
			var added int
			for key, rt := range routeSet(with) {
				if _, ok := core[key]; ok {
					continue
				}
				added++
				req, err := http.NewRequestWithContext(t.Context(), rt.Method, srv.URL+param.ReplaceAllString(rt.Pattern, "x"), nil)
				if err != nil {
					t.Fatal(err)
				}
				res := send(t, req)
				if res.Status != http.StatusNotFound || res.Code() != "route_not_found" {
					t.Errorf("%s without %s: %d %s, want 404 route_not_found", key, f.Name, res.Status, res.Body)
				}
			}
			if added == 0 {
				t.Fatalf("feature %s mounts no routes", f.Name)
			}
		})
	}
}

// TestMountedFeatureServes: once mounted, a feature's route answers.
func TestMountedFeatureServes(t *testing.T) {
	a := api.New(api.Config{})
	a.Mount(api.Metrics(metrics.New()))
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := send(t, req); res.Status != http.StatusOK {
		t.Fatalf("GET /metrics with metrics mounted: %d %s", res.Status, res.Body)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("mounting metrics twice did not panic")
		}
	}()
	a.Mount(api.Metrics(nil))
}

// routeSet is an API's route table, by "METHOD pattern".
func routeSet(a *api.API) map[string]api.Route {
	out := map[string]api.Route{}
	for _, r := range a.Routes() {
		out[r.Method+" "+r.Pattern] = r
	}
	return out
}

// send sends req and reads the answer.
func send(t *testing.T, req *http.Request) servertest.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Response{Status: resp.StatusCode, Body: b}
}
