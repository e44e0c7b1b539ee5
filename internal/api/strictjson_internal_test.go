package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

// strictByTokens is checkStrictJSON as it was before its one-pass scan:
// encoding/json's tokens, a map of the keys seen per object. The scan
// must answer every valid body as it does.
func strictByTokens(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := scanTokens(dec, "", 0); err != nil {
		if errors.Is(err, errStopScan) {
			return nil
		}
		return err
	}
	return noNull(body, reflect.TypeOf(v), "")
}

func scanTokens(dec *json.Decoder, path string, depth int) error {
	if depth > maxJSONDepth {
		return errdefs.InvalidArgument("malformed_json", "the body is nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return errStopScan
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return errStopScan
			}
			key, _ := kt.(string)
			if seen[key] {
				return errdefs.InvalidArgument("duplicate_json_key", "the body has the key %q twice in the same object%s", key, atPath(path))
			}
			seen[key] = true
			if err := scanTokens(dec, joinPath(path, key), depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := scanTokens(dec, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
	default:
		return errStopScan
	}
	if _, err := dec.Token(); err != nil {
		return errStopScan
	}
	return nil
}

// strictBodies are bodies whose answers tell the two scans apart if they
// differ: repeated keys at every depth and position, in arrays, escaped
// and invalid UTF-8 keys that decode alike, nulls in and out of strings.
var strictBodies = []string{
	`{}`, `[]`, `1`, `"x"`, `null`, `true`, ` { } `,
	`{"argv":["true"]}`,
	`{"argv":["true"],"argv":["false"]}`,
	`{"argv":["sh"],"env":{"A":"1","B":"2","A":"3"}}`,
	`{"env":{"A":"1"},"env":{}}`,
	`{"a":{"b":{"c":1,"c":2}}}`,
	`{"a":[{"x":1},{"x":1,"y":2,"x":3}]}`,
	`[[{"k":1}],[{"k":1,"k":2}]]`,
	`{"a\u0062":1,"ab":2}`,
	`{"\ud83d\ude00":1,"😀":2}`,
	`{"a\"b":1,"a\u0022b":2}`,
	"{\"\xff\":1,\"\xfe\":2}",
	`{"argv":null}`,
	`{"argv":["null"],"cwd":"/null"}`,
	`{"argv":["true"],"env":null}`,
	`{"argv":["true"],"env":{"A":null}}`,
	`{"argv":null,"argv":null}`,
	`{"name":"n","runtime":{"cpu_millis":500,"cpu_millis":900}}`,
	`{"name":"n","runtime":{"env":null}}`,
	`{"name":"n","runtime":null,"name":"m"}`,
	`{"x":[1,2,{"y":[{"z":null,"z":0}]}]}`,
	`{"":1,"":2}`,
	`{"a":1, "b" : [ ] , "c":{ } ,"a" :2}`,
	`{"n":-1.5e+10,"n":0}`,
}

// manyKeys is an exec's body whose env has n variables, the last one
// repeating the one at repeat (none when repeat < 0): an object past the
// scan's few keys.
func manyKeys(n, repeat int) string {
	var b strings.Builder
	b.WriteString(`{"argv":["true"],"env":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"V%d":"x"`, i)
	}
	if repeat >= 0 {
		fmt.Fprintf(&b, `,"V%d":"y"`, repeat)
	}
	b.WriteString(`}}`)
	return b.String()
}

func init() {
	for _, n := range []int{fewKeys - 1, fewKeys, fewKeys + 1, 100} {
		strictBodies = append(strictBodies, manyKeys(n, -1), manyKeys(n, 0), manyKeys(n, n-1), manyKeys(n, n/2))
	}
}

// strictTypes are the request types the bodies are checked against.
var strictTypes = []any{&client.ExecRequest{}, &client.CreateProjectRequest{}}

func strictAnswer(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestStrictJSONScan: the one-pass scan answers every body as the scan of
// encoding/json's tokens did, the same refusal with the same message, and
// tells a repeated key apart at any depth.
func TestStrictJSONScan(t *testing.T) {
	for _, body := range strictBodies {
		for _, v := range strictTypes {
			got, want := strictAnswer(checkStrictJSON([]byte(body), v)), strictAnswer(strictByTokens([]byte(body), v))
			if got != want {
				t.Errorf("%T %s: %s, want %s", v, body, got, want)
			}
		}
	}
	for _, tc := range []struct{ body, want string }{
		{`{"a":[{"x":1},{"x":1,"y":2,"x":3}]}`, `duplicate_json_key: the body has the key "x" twice in the same object at a[1]`},
		{`{"a\u0062":1,"ab":2}`, `duplicate_json_key: the body has the key "ab" twice in the same object`},
		{`{"argv":["true"],"env":{"A":null}}`, `ok`},
		{`{"argv":null}`, `null_field: field "argv" must not be null (leave an optional field out instead)`},
	} {
		if got := strictAnswer(checkStrictJSON([]byte(tc.body), &client.ExecRequest{})); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.body, got, tc.want)
		}
	}
}

// FuzzStrictJSON: on any valid JSON the two scans agree.
func FuzzStrictJSON(f *testing.F) {
	for _, b := range strictBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return // decodeJSON hands the scan only bodies the decoder read
		}
		for _, v := range strictTypes {
			got, want := strictAnswer(checkStrictJSON([]byte(body), v)), strictAnswer(strictByTokens([]byte(body), v))
			if got != want {
				t.Fatalf("%T %q: %s, want %s", v, body, got, want)
			}
		}
	})
}

// BenchmarkStrictJSON times the check of a typical exec body and a
// project's creation, by the one-pass scan and, as the baseline in the
// same run, by encoding/json's tokens as before.
func BenchmarkStrictJSON(b *testing.B) {
	for _, tc := range []struct {
		name string
		body string
		v    any
	}{
		{"exec", `{"argv":["sh","-c","echo hi"],"env":{"A":"1"},"timeout_ms":1000}`, &client.ExecRequest{}},
		{"exec, 40,000 env variables", manyKeys(40000, -1), &client.ExecRequest{}},
		{"project", `{"name":"agent-1","start":true,"runtime":{"image":"paddock/debian:bookworm","cpu_millis":1000,"memory_mb":512,"env":{"A":"1","B":"2"},"network":{"mode":"proxy","allow":["registry.test:8081"]}}}`, &client.CreateProjectRequest{}},
	} {
		for _, way := range []struct {
			name  string
			check func([]byte, any) error
		}{{"scan", checkStrictJSON}, {"tokens", strictByTokens}} {
			b.Run(tc.name+"/"+way.name, func(b *testing.B) {
				body := []byte(tc.body)
				b.ReportAllocs()
				for b.Loop() {
					if err := way.check(body, tc.v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
