// Command apigen writes the copy of api/openapi.yaml that the wire types'
// generator reads (scripts/gen-openapi.sh): the same document with x-order
// on every schema property, numbered in the order the properties are written.
// oapi-codegen orders a struct's fields by x-order (alphabetically without
// it), so the Go fields, and the keys of every JSON body the server writes,
// follow the document's order without the served document carrying x-order.
//
//	go run ./internal/apigen IN OUT
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"gopkg.in/yaml.v3"
)

// orderKey is the extension oapi-codegen sorts a struct's fields by.
const orderKey = "x-order"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: apigen IN OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	ordered, err := withOrder(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, ordered, 0o644)
}

// withOrder returns the OpenAPI document src with x-order added to the
// properties of every schema under components.schemas, at any depth.
func withOrder(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("not one YAML document")
	}
	schemas := lookup(lookup(doc.Content[0], "components"), "schemas")
	if schemas == nil || schemas.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no components.schemas")
	}
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		if err := orderSchema(schemas.Content[i+1], schemas.Content[i].Value); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// orderSchema numbers the properties of schema, named by path in errors,
// and of the schemas within it (properties, items, additionalProperties,
// allOf, oneOf, anyOf, not).
func orderSchema(schema *yaml.Node, path string) error {
	if schema == nil || schema.Kind != yaml.MappingNode {
		return nil
	}
	if props := lookup(schema, "properties"); props != nil && props.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(props.Content); i += 2 {
			name, prop := props.Content[i].Value, props.Content[i+1]
			if prop.Kind != yaml.MappingNode {
				continue
			}
			if lookup(prop, orderKey) != nil {
				return fmt.Errorf("%s.%s: %s is given by the order the properties are written in, not by hand", path, name, orderKey)
			}
			prop.Content = append(prop.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: orderKey},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i / 2)})
			if err := orderSchema(prop, path+"."+name); err != nil {
				return err
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if err := orderSchema(lookup(schema, key), path+"."+key); err != nil {
			return err
		}
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list := lookup(schema, key)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for i, sub := range list.Content {
			if err := orderSchema(sub, fmt.Sprintf("%s.%s[%d]", path, key, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookup returns the value of key in the mapping node m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
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
