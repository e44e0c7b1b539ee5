package api_test

import (
	"encoding/json"
	"testing"

	apispec "github.com/paddockhq/paddock/api"
)

// TestOpenAPINoNotConfigured501: an operation that answered 501 only when
// its feature was not configured declares no 501 any more: an unmounted
// feature has no routes, and its operations answer 404 route_not_found
// (TestUnmountedFeaturesHaveNoRoutes); a sign-in without its domain is
// refused when the server starts. Operations in a sandbox keep theirs (a
// provider without the agent).
func TestOpenAPINoNotConfigured501(t *testing.T) {
	raw, err := apispec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct{ method, path string }{
		{"post", "/api/auth/challenge"},
		{"post", "/api/auth/session"},
		{"get", "/api/v1/org/{org}/capabilities"},
		{"post", "/api/v1/org/{org}/capabilities"},
		{"delete", "/api/v1/org/{org}/capabilities/{name}/{version}"},
	} {
		var o struct {
			Responses map[string]json.RawMessage `json:"responses"`
		}
		body, ok := doc.Paths[op.path][op.method]
		if !ok {
			t.Errorf("%s %s is not documented", op.method, op.path)
			continue
		}
		if err := json.Unmarshal(body, &o); err != nil {
			t.Fatal(err)
		}
		if _, ok := o.Responses["501"]; ok {
			t.Errorf("%s %s declares a 501 it cannot answer", op.method, op.path)
		}
	}
}
