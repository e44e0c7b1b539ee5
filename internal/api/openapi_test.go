package api_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	apispec "github.com/paddockhq/paddock/api"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// TestOpenAPIMatchesRoutes holds the router and api/openapi.yaml to each
// other: every route is documented and every documented operation is
// routed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := specDoc(t)
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routed := map[string]bool{}
	for _, r := range fullAPI().Routes() {
		routed[r.Method+" "+r.Pattern] = true
	}
	var missing, extra []string
	for k := range routed {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !routed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes not in openapi.yaml: %v\ndocumented but not routed: %v", missing, extra)
	}
}

// TestOpenAPIRoles holds each operation's x-paddock-role to what its
// route needs, and keeps every operation that changes something above
// viewer: a new mutating route cannot be left open to viewers.
func TestOpenAPIRoles(t *testing.T) {
	doc := specDoc(t)
	documented := map[string]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			var o struct {
				Role string `json:"x-paddock-role"`
			}
			if err := json.Unmarshal(op, &o); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			documented[strings.ToUpper(method)+" "+path] = o.Role
		}
	}
	needs := map[api.Need]bool{"public": true, "any": true, "installation": true, "viewer": true, "member": true, "admin": true, "owner": true}
	for _, r := range fullAPI().Routes() {
		op := r.Method + " " + r.Pattern
		if !needs[r.Need] {
			t.Errorf("%s needs %q, which is no role", op, r.Need)
		}
		if role, ok := documented[op]; ok && role != string(r.Need) {
			t.Errorf("%s: x-paddock-role is %q, the route needs %q", op, role, r.Need)
		}
		if r.Method != "GET" && r.Need == "viewer" {
			t.Errorf("%s changes something, yet a viewer may call it", op)
		}
	}
}

// fullAPI is an API with every feature mounted, as a server with all of
// them configured has: its route table is the whole API.
func fullAPI() *api.API {
	a := api.New(api.Config{Tenancy: tenancy.New(tenancy.Config{})})
	a.Mount(api.Metrics(nil), api.SignIn(nil), api.SSH(nil), api.Credits(nil), api.Capabilities(nil), api.Sessions(nil), api.Tasks(nil), api.Worlds(nil), api.Snapshots(nil), api.Hosts(nil), api.Workflows(nil), api.TemplateBuilds(nil), api.Events(nil, 0, 0))
	// Last: its routes mirror the runtime routes mounted before it.
	a.Mount(api.Instance(noInstance))
	return a
}

// noInstance is an instance mode whose runtime is not known yet.
func noInstance() (api.Sandbox, bool) { return api.Sandbox{}, false }

// openapiDoc is the served document's operations, by path and method.
type openapiDoc struct {
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

// specDoc reads the served document.
func specDoc(t *testing.T) openapiDoc {
	t.Helper()
	raw, err := apispec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc openapiDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
