package main

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestWithOrderNumbersPropertiesAsWritten holds that every schema property
// gets x-order in the order it is written: block and flow mappings, a $ref
// with siblings, nested objects, items and allOf members alike.
func TestWithOrderNumbersPropertiesAsWritten(t *testing.T) {
	src := `openapi: 3.1.0
components:
  schemas:
    Session:
      type: object
      properties:
        seq: {type: integer}
        turn: {type: integer}
        time: {type: string}
        usage: {$ref: '#/components/schemas/Usage'}
    Usage: {type: object, properties: {input_tokens: {type: integer}, cost_usd: {type: number}}}
    Logs:
      type: object
      properties:
        sandbox_id: {type: string}
        lifecycle:
          type: array
          items:
            type: object
            properties:
              time: {type: string}
              level: {type: string}
    Transcript:
      allOf:
        - {$ref: '#/components/schemas/Session'}
        - type: object
          properties:
            events: {type: array}
            done: {type: boolean}
`
	out, err := withOrder([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	logs := schemas["Logs"].(map[string]any)["properties"].(map[string]any)
	entry := logs["lifecycle"].(map[string]any)["items"].(map[string]any)
	transcript := schemas["Transcript"].(map[string]any)["allOf"].([]any)[1].(map[string]any)
	for _, c := range []struct {
		name  string
		props any
		want  map[string]int
	}{
		{"Session", schemas["Session"].(map[string]any)["properties"], map[string]int{"seq": 0, "turn": 1, "time": 2, "usage": 3}},
		{"Usage", schemas["Usage"].(map[string]any)["properties"], map[string]int{"input_tokens": 0, "cost_usd": 1}},
		{"Logs", logs, map[string]int{"sandbox_id": 0, "lifecycle": 1}},
		{"Logs.lifecycle[]", entry["properties"], map[string]int{"time": 0, "level": 1}},
		{"Transcript.allOf[1]", transcript["properties"], map[string]int{"events": 0, "done": 1}},
	} {
		got := map[string]int{}
		for name, prop := range c.props.(map[string]any) {
			order, ok := prop.(map[string]any)[orderKey].(int)
			if !ok {
				t.Errorf("%s.%s has no %s", c.name, name, orderKey)
			}
			got[name] = order
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: x-order %v, want %v", c.name, got, c.want)
		}
	}
}

// TestWithOrderRefusesWrittenOrder holds that x-order is never written in
// the spec by hand, where it would fight the written order.
func TestWithOrderRefusesWrittenOrder(t *testing.T) {
	src := "components: {schemas: {S: {type: object, properties: {b: {type: string}, a: {type: string, x-order: 0}}}}}\n"
	_, err := withOrder([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "S.a") {
		t.Fatalf("withOrder = %v, want an error naming S.a", err)
	}
}

// TestWithOrderChangesNothingElse holds that the generator's copy of
// api/openapi.yaml is the document itself plus x-order: removing x-order
// from it gives back the same document.
func TestWithOrderChangesNothingElse(t *testing.T) {
	src, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := withOrder(src)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := yaml.Unmarshal(src, &want); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if n := dropOrder(got); n == 0 {
		t.Fatal("the copy has no x-order")
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the copy differs from api/openapi.yaml in more than x-order")
	}
}

// dropOrder removes x-order from every mapping in v and counts them.
func dropOrder(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[orderKey]; ok {
			delete(v, orderKey)
			n++
		}
		for _, e := range v {
			n += dropOrder(e)
		}
	case []any:
		for _, e := range v {
			n += dropOrder(e)
		}
	}
	return n
}
