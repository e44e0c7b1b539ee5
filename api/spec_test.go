package apispec

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestServedSpecHasNoGoOnlyProperties holds that the document the server
// serves describes only what is on the wire: no property is marked
// x-go-json-ignore (a Go-only field belongs in the generator's overlay,
// pkg/client/oapi-codegen-overlay.yaml), and Error is code, message and
// request_id, without the Go SDK's status_code.
func TestServedSpecHasNoGoOnlyProperties(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties map[string]any `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	var tree any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	for _, path := range pathsWithKey(tree, "x-go-json-ignore", "$") {
		t.Errorf("%s carries x-go-json-ignore: a property never in a body has no place in the served document", path)
	}
	var props []string
	for name := range doc.Components.Schemas.Error.Properties {
		props = append(props, name)
	}
	slices.Sort(props)
	if want := []string{"code", "message", "request_id"}; !reflect.DeepEqual(props, want) {
		t.Errorf("Error's properties are %v, want %v", props, want)
	}
}

// pathsWithKey lists the places in v where a map has the key.
func pathsWithKey(v any, key, path string) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == key {
				found = append(found, path)
			}
			found = append(found, pathsWithKey(child, key, path+"."+k)...)
		}
	case []any:
		for i, child := range v {
			found = append(found, pathsWithKey(child, key, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return found
}
