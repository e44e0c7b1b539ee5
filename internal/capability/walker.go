package capability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// walker reads a YAML document node by node and records a problem for
// every key it does not know and every value of the wrong type, so that
// one pass reports everything wrong with a file. Locations are written
// the way the author sees the file: "workers[1].run".
type walker struct {
	v    *validator
	file string
	// prefix goes before every location ("frontmatter").
	prefix string
}

func (w walker) add(at, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	var loc []string
	if w.prefix != "" {
		loc = append(loc, w.prefix)
	}
	if at != "" {
		loc = append(loc, at)
	}
	if len(loc) > 0 {
		msg = strings.Join(loc, ": ") + ": " + msg
	}
	w.v.add(w.file, "%s", msg)
}

func field(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func index(at string, i int) string {
	return at + "[" + strconv.Itoa(i) + "]"
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// usable reports whether n may be read as a value; aliases are refused so
// that one small document cannot expand into a huge one.
func (w walker) usable(n *yaml.Node, at string) bool {
	if n.Kind == yaml.AliasNode {
		w.add(at, "anchors and aliases are not supported")
		return false
	}
	return true
}

// mapping returns the keys of a mapping. With known, any other key is a
// problem; with no known keys, every key is accepted. Absent or null is an
// empty mapping; anything else that is not a mapping is a problem and
// returns nil.
func (w walker) mapping(n *yaml.Node, at string, known ...string) map[string]*yaml.Node {
	if isNull(n) {
		return map[string]*yaml.Node{}
	}
	if !w.usable(n, at) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.add(at, "must be a mapping")
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for _, e := range w.entries(n, at) {
		if len(known) > 0 && !slices.Contains(known, e.key) {
			w.add(field(at, e.key), "unknown field")
			continue
		}
		out[e.key] = e.val
	}
	return out
}

type entry struct {
	key string
	val *yaml.Node
}

// entries returns a mapping's entries in document order: string keys,
// each once.
func (w walker) entries(n *yaml.Node, at string) []entry {
	if isNull(n) {
		return nil
	}
	if !w.usable(n, at) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.add(at, "must be a mapping")
		return nil
	}
	seen := make(map[string]bool, len(n.Content)/2)
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			w.add(at, "key %q must be a string", k.Value)
			continue
		}
		if seen[k.Value] {
			w.add(field(at, k.Value), "duplicate key")
			continue
		}
		seen[k.Value] = true
		out = append(out, entry{key: k.Value, val: val})
	}
	return out
}

// list returns a sequence's items; absent or null is an empty list.
func (w walker) list(n *yaml.Node, at string) []*yaml.Node {
	if isNull(n) {
		return nil
	}
	if !w.usable(n, at) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		w.add(at, "must be a list")
		return nil
	}
	return n.Content
}

// str returns a string value. A required one must be present and not
// blank. ok is false when a problem was recorded.
func (w walker) str(n *yaml.Node, at string, required bool) (s string, ok bool) {
	if isNull(n) {
		if required {
			w.add(at, "required")
			return "", false
		}
		return "", true
	}
	if !w.usable(n, at) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		w.add(at, "must be a string")
		return "", false
	}
	if required && strings.TrimSpace(n.Value) == "" {
		w.add(at, "required")
		return "", false
	}
	return n.Value, true
}

// line is a string on one line.
func (w walker) line(n *yaml.Node, at string, required bool) (string, bool) {
	s, ok := w.str(n, at, required)
	if ok && strings.ContainsAny(s, "\r\n") {
		w.add(at, "must be one line")
		return "", false
	}
	return strings.TrimSpace(s), ok
}

const itemNameRule = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters"

// name is a required item name.
func (w walker) name(n *yaml.Node, at string) (string, bool) {
	s, ok := w.str(n, at, true)
	if !ok {
		return "", false
	}
	if !validItemName(s) {
		w.add(at, "%q is not a valid name (%s)", s, itemNameRule)
		return "", false
	}
	return s, true
}

func (w walker) boolean(n *yaml.Node, at string) (b, ok bool) {
	if isNull(n) {
		return false, true
	}
	if !w.usable(n, at) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		w.add(at, "must be true or false")
		return false, false
	}
	return b, true
}

// integer returns an integer; present is false when it is absent.
func (w walker) integer(n *yaml.Node, at string) (i int64, present, ok bool) {
	if isNull(n) {
		return 0, false, true
	}
	if !w.usable(n, at) {
		return 0, true, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		w.add(at, "must be an integer")
		return 0, true, false
	}
	return i, true, true
}

// strList is a list of strings.
func (w walker) strList(n *yaml.Node, at string) ([]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if !w.usable(n, at) {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		w.add(at, "must be a list of strings")
		return nil, false
	}
	ok := true
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		s, itemOK := w.str(item, index(at, i), false)
		if itemOK && isNull(item) {
			w.add(index(at, i), "must be a string")
			itemOK = false
		}
		ok = ok && itemOK
		out = append(out, s)
	}
	return out, ok
}

// names is a list of names written as a YAML list or as one
// comma-separated string, the two forms agent frontmatter takes.
func (w walker) names(n *yaml.Node, at string) ([]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		var out []string
		for part := range strings.SplitSeq(n.Value, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, true
	}
	if n.Kind != yaml.SequenceNode {
		w.add(at, "must be a list of strings or a comma-separated string")
		return nil, false
	}
	return w.strList(n, at)
}

// strMap is a mapping of strings to strings.
func (w walker) strMap(n *yaml.Node, at string) (map[string]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		w.entries(n, at) // records why
		return nil, false
	}
	ok := true
	out := make(map[string]string, len(n.Content)/2)
	for _, e := range w.entries(n, at) {
		s, valOK := w.str(e.val, field(at, e.key), false)
		if valOK && isNull(e.val) {
			w.add(field(at, e.key), "must be a string")
			valOK = false
		}
		ok = ok && valOK
		out[e.key] = s
	}
	return out, ok
}
