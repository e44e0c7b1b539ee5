package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// checkStrictJSON refuses what encoding/json lets through: an object with
// the same key twice, at any depth (the last one would silently win), and
// null for a field of v's type (null would silently read as the zero
// value; api/openapi.yaml allows it nowhere: leave an optional field out
// instead). Malformed JSON is left for the decoder to report.
func checkStrictJSON(body []byte, v any) error {
	sc := keyScan{b: body}
	if err := sc.value(nil, 0); err != nil {
		if errors.Is(err, errStopScan) {
			return nil
		}
		return err
	}
	if !bytes.Contains(body, []byte("null")) {
		return nil // no null anywhere, not even in a string
	}
	return noNull(body, reflect.TypeOf(v), "")
}

// errStopScan ends a scan of malformed JSON; the decoder says what is wrong.
var errStopScan = errors.New("stop")

// maxJSONDepth is encoding/json's own nesting limit.
const maxJSONDepth = 10000

// fewKeys is how many keys of one object the scan compares one by one.
const fewKeys = 16

// keyScan walks one JSON value's bytes once, refusing an object that
// repeats a key (keys compared as encoding/json decodes them); the path
// of a value is rendered only for the error.
type keyScan struct {
	b []byte
	i int
}

// jsonPath is where a value sits in the body: a key of an object, or an
// index of an array, below parent; nil is the top.
type jsonPath struct {
	parent *jsonPath
	key    string
	index  int // of an array, when key is ""
	inArr  bool
}

// String renders p as the errors name paths: keys joined with ".", an
// array's index in brackets ("runtime.ports[2].name").
func (p *jsonPath) String() string {
	if p == nil {
		return ""
	}
	if p.inArr {
		return p.parent.String() + "[" + strconv.Itoa(p.index) + "]"
	}
	return joinPath(p.parent.String(), p.key)
}

func (s *keyScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value at path, depth values deep.
func (s *keyScan) value(path *jsonPath, depth int) error {
	if depth > maxJSONDepth {
		return errdefs.InvalidArgument("malformed_json", "the body is nested too deeply")
	}
	s.space()
	if s.i >= len(s.b) {
		return errStopScan
	}
	switch s.b[s.i] {
	case '{':
		return s.object(path, depth)
	case '[':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for n := 0; ; n++ {
			if err := s.value(&jsonPath{parent: path, index: n, inArr: true}, depth+1); err != nil {
				return err
			}
			if more, err := s.next(']'); !more {
				return err
			}
		}
	case '"':
		_, err := s.str()
		return err
	}
	// A number, true, false or null: up to the next delimiter.
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			if s.i == start {
				return errStopScan
			}
			return nil
		}
		s.i++
	}
	return nil
}

// object reads an object whose '{' is at s.i.
func (s *keyScan) object(path *jsonPath, depth int) error {
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	// Most objects have a few keys, which a slice holds faster than a
	// map; past fewKeys they go in a map, so that an object of many (a
	// 1 MiB body of env variables) costs no more than its size.
	var (
		few  []string
		many map[string]struct{}
	)
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return errStopScan
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		_, repeated := many[key]
		if repeated || slices.Contains(few, key) {
			return errdefs.InvalidArgument("duplicate_json_key", "the body has the key %q twice in the same object%s", key, atPath(path.String()))
		}
		switch {
		case many != nil:
			many[key] = struct{}{}
		case len(few) < fewKeys:
			few = append(few, key)
		default:
			many = make(map[string]struct{}, 2*fewKeys)
			for _, k := range few {
				many[k] = struct{}{}
			}
			many[key] = struct{}{}
			few = nil
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return errStopScan
		}
		s.i++
		if err := s.value(&jsonPath{parent: path, key: key}, depth+1); err != nil {
			return err
		}
		if more, err := s.next('}'); !more {
			return err
		}
	}
}

// next reads what follows a member of an array or an object: more after a
// comma, nil at closing, errStopScan at anything else.
func (s *keyScan) next(closing byte) (more bool, err error) {
	s.space()
	if s.i >= len(s.b) {
		return false, errStopScan
	}
	s.i++
	switch s.b[s.i-1] {
	case ',':
		return true, nil
	case closing:
		return false, nil
	}
	return false, errStopScan
}

// str reads a string whose '"' is at s.i and returns it as encoding/json
// decodes it: escapes resolved, invalid UTF-8 made U+FFFD.
func (s *keyScan) str() (string, error) {
	start := s.i
	s.i++
	plain := true
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			raw := s.b[start+1 : s.i-1]
			if plain && utf8.Valid(raw) {
				return string(raw), nil
			}
			var out string
			if json.Unmarshal(s.b[start:s.i], &out) != nil {
				return "", errStopScan
			}
			return out, nil
		case c == '\\':
			plain = false
			s.i += 2
		default:
			s.i++
		}
	}
	return "", errStopScan
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
