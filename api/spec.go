// Package apispec holds paddock's HTTP contract, openapi.yaml, the source of
// truth for every route; the server serves it as JSON at /api/openapi.json
// and a test holds the router and the document to each other.
package apispec

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

//go:embed openapi.yaml
var openapiYAML []byte

// YAML returns the OpenAPI document as written.
func YAML() []byte { return openapiYAML }

// JSON returns the OpenAPI document converted to JSON.
func JSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
}
