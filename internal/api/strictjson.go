package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// checkStrictJSON refuses what encoding/json lets through: an object with
// the same key twice, at any depth (the last one would silently win), and
// null for a field of v's type (null would silently read as the zero
// value; api/openapi.yaml allows it nowhere: leave an optional field out
// instead). Malformed JSON is left for the decoder to report.
func checkStrictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := scanJSON(dec, "", 0); err != nil {
		if errors.Is(err, errStopScan) {
			return nil
		}
		return err
	}
	return noNull(body, reflect.TypeOf(v), "")
}

// errStopScan ends a scan of malformed JSON; the decoder says what is wrong.
var errStopScan = errors.New("stop")

// maxJSONDepth is encoding/json's own nesting limit.
const maxJSONDepth = 10000

// scanJSON reads one value, refusing an object that repeats a key.
func scanJSON(dec *json.Decoder, path string, depth int) error {
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
			if err := scanJSON(dec, joinPath(path, key), depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := scanJSON(dec, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
	default:
		return errStopScan
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return errStopScan
	}
	return nil
}

// noNull refuses null for a field of struct type t, and of the structs
// inside it.
func noNull(body []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return nil // not an object: the decoder says so
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := obj[name]
		if !ok {
			continue
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return errdefs.InvalidArgument("null_field", "field %q must not be null (leave an optional field out instead)", joinPath(path, name))
		}
		if err := noNull(raw, f.Type, joinPath(path, name)); err != nil {
			return err
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func atPath(path string) string {
	if path == "" {
		return ""
	}
	return " at " + path
}
