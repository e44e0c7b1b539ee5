package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	apispec "github.com/paddockhq/paddock/api"
)

// loadSpec parses the served document (api/openapi.yaml as JSON) with a
// real OpenAPI validator.
func loadSpec(t testing.TB) *openapi3.T {
	t.Helper()
	raw, err := apispec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	return doc
}

// TestOpenAPIValid checks api/openapi.yaml, as served, with kin-openapi's
// validator, and looks for keys that only a mis-parsed flow mapping makes
// (a description cut at a comma leaves a key with a null value).
func TestOpenAPIValid(t *testing.T) {
	doc := loadSpec(t)
	if err := doc.Validate(t.Context(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("api/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	raw, err := apispec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range nullKeys("", v) {
		t.Errorf("the served document has %s = null: an unquoted flow mapping split a description at a comma", p)
	}
}

// nullKeys lists the keys whose value is null, by path.
func nullKeys(path string, v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			if vv == nil {
				out = append(out, path+"."+k)
			}
			out = append(out, nullKeys(path+"."+k, vv)...)
		}
	case []any:
		for i, vv := range x {
			out = append(out, nullKeys(fmt.Sprintf("%s[%d]", path, i), vv)...)
		}
	}
	return out
}
