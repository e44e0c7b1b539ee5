package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestWireFieldsFollowSpecOrder holds that every generated struct has its
// JSON fields in the order api/openapi.yaml writes its schema's properties,
// which is the order of the keys in every body the server writes. The
// generator alone would sort them by name; internal/apigen numbers them for
// it (x-order) in the written order.
func TestWireFieldsFollowSpecOrder(t *testing.T) {
	want := specPropertyOrder(t, "../../api/openapi.yaml")
	got := structFieldOrder(t, "wire.gen.go")
	if len(got) == 0 {
		t.Fatal("wire.gen.go declares no struct with JSON fields")
	}
	for name, fields := range got {
		props, ok := want[name]
		if !ok {
			t.Errorf("wire.gen.go's %s is no schema's type in api/openapi.yaml", name)
			continue
		}
		if !slices.Equal(fields, props) {
			t.Errorf("%s's JSON fields are %v; api/openapi.yaml writes %v (run scripts/gen-openapi.sh)", name, fields, props)
		}
	}
}

// specPropertyOrder returns, by Go type name, the properties of the spec's
// schemas in the order they are written, an allOf's inline members' in turn.
// A schema's Go name is its x-go-name or x-go-type-name, else its own name.
func specPropertyOrder(t *testing.T, path string) map[string][]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := yamlValue(yamlValue(doc.Content[0], "components"), "schemas")
	if schemas == nil {
		t.Fatal("api/openapi.yaml has no components.schemas")
	}
	order := map[string][]string{}
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		collectPropertyOrder(schemas.Content[i+1], schemas.Content[i].Value, order)
	}
	return order
}

// collectPropertyOrder records schema's written property order under its Go
// name (or name) and that of the named schemas written inside it.
func collectPropertyOrder(schema *yaml.Node, name string, order map[string][]string) {
	if schema == nil || schema.Kind != yaml.MappingNode {
		return
	}
	for _, key := range []string{"x-go-name", "x-go-type-name"} {
		if v := yamlValue(schema, key); v != nil {
			name = v.Value
		}
	}
	var inner []*yaml.Node
	props := propertyNames(schema, &inner)
	if allOf := yamlValue(schema, "allOf"); allOf != nil {
		for _, member := range allOf.Content {
			props = append(props, propertyNames(member, &inner)...)
		}
	}
	if len(props) > 0 && name != "" {
		order[name] = props
	}
	for _, key := range []string{"items", "additionalProperties"} {
		inner = append(inner, yamlValue(schema, key))
	}
	for _, sub := range inner {
		collectPropertyOrder(sub, "", order)
	}
}

// propertyNames returns the names of schema's properties as written and
// adds their schemas to inner.
func propertyNames(schema *yaml.Node, inner *[]*yaml.Node) []string {
	props := yamlValue(schema, "properties")
	if props == nil || props.Kind != yaml.MappingNode {
		return nil
	}
	var names []string
	for i := 0; i+1 < len(props.Content); i += 2 {
		names = append(names, props.Content[i].Value)
		*inner = append(*inner, props.Content[i+1])
	}
	return names
}

func yamlValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// structFieldOrder returns, by type name, the JSON names of the fields of
// every struct declared in file, in order; neither embedded fields nor
// json:"-" ones, which are never a key of their own.
func structFieldOrder(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	order := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		var names []string
		for _, field := range st.Fields.List {
			if field.Tag == nil || len(field.Names) == 0 {
				continue
			}
			tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Get("json")
			if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			order[ts.Name.Name] = names
		}
		return true
	})
	return order
}
