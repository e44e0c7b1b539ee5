package capability

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const root = "/workspace/.paddock/capabilities"

func planFiles(p Plan) map[string]PlanFile {
	out := map[string]PlanFile{}
	for _, f := range p.Files {
		out[f.Path] = f
	}
	return out
}

func TestMaterializeLayout(t *testing.T) {
	a, b := alpha(t, "1.0.0"), beta(t)
	p := Materialize(Resolve([]Binding{{ID: "b1", Bundle: a}, {ID: "b2", Bundle: b}}))

	var got []string
	for _, f := range p.Files {
		got = append(got, f.Mode.String()+" "+f.Path)
	}
	want := []string{
		"-rw-r--r-- /workspace/.claude/agents/other.md",
		"-rw-r--r-- /workspace/.claude/agents/rev.md",
		"-rw-r--r-- /workspace/.claude/skills/map/SKILL.md",
		"-rw-r--r-- /workspace/.claude/skills/map/ref.md",
		"-rw-r--r-- /workspace/.kimi-code/mcp.json",
		"-rw-r--r-- " + root + "/alpha/agents/rev.md",
		"-rwxr-xr-x " + root + "/alpha/bin/mem",
		"-rw-r--r-- " + root + "/alpha/capability.yaml",
		"-rw-r--r-- " + root + "/alpha/data/.keep",
		"-rw-r--r-- " + root + "/alpha/skills/map/SKILL.md",
		"-rw-r--r-- " + root + "/alpha/skills/map/ref.md",
		"-rwxr-xr-x " + root + "/alpha/tools/map",
		"-rw-r--r-- " + root + "/beta/agents/other.md",
		"-rw-r--r-- " + root + "/beta/agents/rev.md",
		"-rw-r--r-- " + root + "/beta/capability.yaml",
		"-rw-r--r-- " + root + "/beta/skills/map/SKILL.md",
		"-rwxr-xr-x " + root + "/beta/tools/bt",
		"-rwxr-xr-x " + root + "/beta/tools/map",
		"-rwxr-xr-x " + root + "/bin/bt",
		"-rwxr-xr-x " + root + "/bin/map",
		"-rw-r--r-- " + root + "/codex/config.toml",
		"-rw-r--r-- " + root + "/gemini/settings.json",
		"-rw-r--r-- " + root + "/mcp.json",
		"-rw-r--r-- " + root + "/opencode.json",
		"-rw-r--r-- " + root + "/resolved.json",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
	wantManaged := []string{
		"/workspace/.claude/agents/other.md",
		"/workspace/.claude/agents/rev.md",
		"/workspace/.claude/skills/map/SKILL.md",
		"/workspace/.claude/skills/map/ref.md",
		"/workspace/.kimi-code/mcp.json",
	}
	if !reflect.DeepEqual(p.Managed, wantManaged) {
		t.Errorf("managed %q, want %q", p.Managed, wantManaged)
	}

	// The first binding's copies win the shared names.
	files := planFiles(p)
	for at, want := range map[string]string{
		root + "/bin/map":                        "#!/bin/sh\necho alpha\n",
		"/workspace/.claude/agents/rev.md":       "---\nname: rev\ndescription: Alpha reviews.\n---\nAlpha.\n",
		"/workspace/.claude/skills/map/ref.md":   "alpha ref",
		"/workspace/.claude/skills/map/SKILL.md": "---\nname: map\ndescription: Alpha maps.\n---\nAlpha.\n",
		root + "/beta/tools/map":                 "#!/bin/sh\necho beta\n",
	} {
		if got := string(files[at].Data); got != want {
			t.Errorf("%s = %q, want %q", at, got, want)
		}
	}

	if again := Materialize(Resolve([]Binding{{ID: "b1", Bundle: a}, {ID: "b2", Bundle: b}})); !reflect.DeepEqual(again, p) {
		t.Error("two materializations of the same set differ")
	}
}

func TestMaterializeEmpty(t *testing.T) {
	p := Materialize(Resolve(nil))
	want := map[string]string{
		root + "/mcp.json":             "{\n  \"mcpServers\": {}\n}\n",
		root + "/opencode.json":        "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {}\n}\n",
		root + "/gemini/settings.json": "{\n  \"mcpServers\": {}\n}\n",
		root + "/codex/config.toml":    "# MCP servers of the capabilities bound to this runtime, written by paddock.\n",
	}
	files := planFiles(p)
	if len(files) != 5 || len(p.Managed) != 0 {
		t.Errorf("an empty set writes %d files, %d managed", len(files), len(p.Managed))
	}
	for at, w := range want {
		if got := string(files[at].Data); got != w {
			t.Errorf("%s = %q, want %q", at, got, w)
		}
	}
}

// mcpPlan materializes alpha with its servers and beta's, which has the
// other memory server when alpha's is off.
func mcpPlan(t *testing.T) map[string]PlanFile {
	a, b := alpha(t, "1.0.0"), beta(t)
	return planFiles(Materialize(Resolve([]Binding{{ID: "b1", Bundle: a}, {ID: "b2", Bundle: b}})))
}

var (
	memCommand = root + "/alpha/bin/mem"
	memArgs    = []any{"--data", root + "/alpha/data"}
	memEnv     = map[string]any{"DB": root + "/alpha/db.json", "Q": "say \"hi\" \\ then\nnewline"}
	docsURL    = "https://docs.example.com/mcp"
)

func decodeJSON(t *testing.T, f PlanFile) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(f.Data, &v); err != nil {
		t.Fatalf("%s: %v\n%s", f.Path, err, f.Data)
	}
	return v
}

func TestMCPConfigs(t *testing.T) {
	files := mcpPlan(t)
	tests := []struct {
		path string
		want map[string]any
	}{
		{root + "/mcp.json", map[string]any{"mcpServers": map[string]any{
			"memory":  map[string]any{"command": memCommand, "args": memArgs, "env": memEnv},
			"my.docs": map[string]any{"type": "http", "url": docsURL},
		}}},
		{root + "/opencode.json", map[string]any{
			"$schema": "https://opencode.ai/config.json",
			"mcp": map[string]any{
				"memory":  map[string]any{"type": "local", "command": append([]any{memCommand}, memArgs...), "environment": memEnv, "enabled": true},
				"my.docs": map[string]any{"type": "remote", "url": docsURL, "enabled": true},
			},
		}},
		{root + "/gemini/settings.json", map[string]any{"mcpServers": map[string]any{
			"memory":  map[string]any{"command": memCommand, "args": memArgs, "env": memEnv},
			"my.docs": map[string]any{"httpUrl": docsURL},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := decodeJSON(t, files[tt.path]); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}

	t.Run("codex config.toml", func(t *testing.T) {
		data := string(files[root+"/codex/config.toml"].Data)
		got, err := parseTOML(data)
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		want := map[string]map[string]any{
			"mcp_servers.memory":  {"command": memCommand, "args": memArgs, "env": memEnv},
			"mcp_servers.my.docs": {"url": docsURL},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %v\nwant %v\n%s", got, want, data)
		}
		// "my.docs" must be one quoted key, not two tables.
		if !strings.Contains(data, `[mcp_servers."my.docs"]`) {
			t.Errorf("the dotted name is not quoted:\n%s", data)
		}
	})
}

func TestResolvedJSON(t *testing.T) {
	v := decodeJSON(t, mcpPlan(t)[root+"/resolved.json"])
	if v["root"] != root || v["bin"] != root+"/bin" {
		t.Errorf("root %v, bin %v", v["root"], v["bin"])
	}
	names := func(key string) []string {
		var out []string
		for _, it := range v[key].([]any) {
			m := it.(map[string]any)
			out = append(out, fmt.Sprint(m["capability"], "/", m["name"], " ", m["path"]))
		}
		return out
	}
	for key, want := range map[string][]string{
		"agents":      {"alpha/rev /workspace/.claude/agents/rev.md", "beta/other /workspace/.claude/agents/other.md"},
		"skills":      {"alpha/map /workspace/.claude/skills/map"},
		"tools":       {"alpha/map " + root + "/bin/map", "beta/bt " + root + "/bin/bt"},
		"mcp_servers": {"alpha/memory <nil>", "alpha/my.docs <nil>"},
		"workers":     {"alpha/sync <nil>"},
		"setup":       {"alpha/prepare <nil>", "beta/prepare <nil>"},
		"checks":      {"alpha/sh <nil>"},
	} {
		if got := names(key); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q, want %q", key, got, want)
		}
	}
	if n := len(v["conflicts"].([]any)); n != 5 {
		t.Errorf("%d conflicts, want 5", n)
	}
	bindings := v["bindings"].([]any)
	if first := bindings[0].(map[string]any); first["capability"] != "alpha" || first["dir"] != root+"/alpha" ||
		!reflect.DeepEqual(first["flags"], map[string]any{"mem": true, "idx.fast": false}) {
		t.Errorf("first binding %v", first)
	}
}

func TestTOMLStrings(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnew\nline\r\f\b", "ctl\x01\x7f", "ünï©ode ✓"} {
		toml := "k = " + tomlString(s) + "\n" + tomlKey(s+"x") + " = \"v\"\n"
		got, err := parseTOML("[t]\n" + toml)
		if err != nil {
			t.Errorf("%q: %v\n%s", s, err, toml)
			continue
		}
		if got["t"]["k"] != s || got["t"][s+"x"] != "v" {
			t.Errorf("%q round-tripped as %q", s, got["t"])
		}
	}
}

// parseTOML reads the subset of TOML that codexConfig writes: comments,
// table headers of dotted (bare or quoted) keys, and key = value where a
// value is a basic string, an array of them, or an inline table of them.
// Tables are keyed by their path joined with '.'.
func parseTOML(data string) (map[string]map[string]any, error) {
	tables := map[string]map[string]any{}
	var current map[string]any
	for n, line := range strings.Split(data, "\n") {
		p := &tomlParser{s: strings.TrimSpace(line)}
		if p.s == "" || p.s[0] == '#' {
			continue
		}
		fail := func(err error) (map[string]map[string]any, error) {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		if p.s[0] == '[' {
			p.i++
			var path []string
			for {
				k, err := p.key()
				if err != nil {
					return fail(err)
				}
				path = append(path, k)
				p.space()
				if p.eat('.') {
					continue
				}
				if !p.eat(']') {
					return fail(fmt.Errorf("bad table header"))
				}
				break
			}
			name := strings.Join(path, ".")
			if _, dup := tables[name]; dup {
				return fail(fmt.Errorf("table %s defined twice", name))
			}
			current = map[string]any{}
			tables[name] = current
		} else {
			if current == nil {
				return fail(fmt.Errorf("key outside a table"))
			}
			k, v, err := p.keyValue()
			if err != nil {
				return fail(err)
			}
			if _, dup := current[k]; dup {
				return fail(fmt.Errorf("key %s defined twice", k))
			}
			current[k] = v
		}
		if p.space(); p.i != len(p.s) {
			return fail(fmt.Errorf("trailing %q", p.s[p.i:]))
		}
	}
	return tables, nil
}

type tomlParser struct {
	s string
	i int
}

func (p *tomlParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *tomlParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// next reports whether c comes next, without consuming it.
func (p *tomlParser) next(c byte) bool {
	p.space()
	return p.i < len(p.s) && p.s[p.i] == c
}

func (p *tomlParser) key() (string, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '"' {
		return p.str()
	}
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", p.s[p.i]) >= 0 {
		p.i++
	}
	if p.i == start {
		return "", fmt.Errorf("expected a key at %q", p.s[p.i:])
	}
	return p.s[start:p.i], nil
}

func (p *tomlParser) keyValue() (string, any, error) {
	k, err := p.key()
	if err != nil {
		return "", nil, err
	}
	if !p.eat('=') {
		return "", nil, fmt.Errorf("expected '=' after %s", k)
	}
	v, err := p.value()
	return k, v, err
}

func (p *tomlParser) value() (any, error) {
	p.space()
	switch {
	case p.i >= len(p.s):
		return nil, fmt.Errorf("missing value")
	case p.s[p.i] == '"':
		return p.str()
	case p.eat('['):
		out := []any{}
		for !p.eat(']') {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			if !p.eat(',') && !p.next(']') {
				return nil, fmt.Errorf("expected ',' or ']'")
			}
		}
		return out, nil
	case p.eat('{'):
		out := map[string]any{}
		for !p.eat('}') {
			k, v, err := p.keyValue()
			if err != nil {
				return nil, err
			}
			out[k] = v
			if !p.eat(',') && !p.next('}') {
				return nil, fmt.Errorf("expected ',' or '}'")
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value at %q", p.s[p.i:])
}

// str reads a basic string.
func (p *tomlParser) str() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", fmt.Errorf("unfinished escape")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				if p.i+4 > len(p.s) {
					return "", fmt.Errorf("short \\u escape")
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return "", err
				}
				b.WriteRune(rune(r))
				p.i += 4
			default:
				return "", fmt.Errorf("invalid escape \\%c", e)
			}
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", fmt.Errorf("control character %#x in a basic string", c)
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
	return "", fmt.Errorf("unterminated string")
}

// Files materialized from the catalog keep the modes Load gave them.
func TestMaterializeCatalogModes(t *testing.T) {
	b, ok := FromCatalog("repo-tools", "")
	if !ok {
		t.Fatal("repo-tools is not in the catalog")
	}
	files := planFiles(Materialize(Resolve([]Binding{{ID: "x", Bundle: b}})))
	for at, mode := range map[string]fs.FileMode{
		root + "/bin/repo-map":                        0o755,
		root + "/repo-tools/tools/repo-map":           0o755,
		root + "/repo-tools/capability.yaml":          0o644,
		"/workspace/.claude/agents/code-reviewer.md":  0o644,
		"/workspace/.claude/skills/repo-map/SKILL.md": 0o644,
	} {
		if f, ok := files[at]; !ok || f.Mode != mode {
			t.Errorf("%s: present %v, mode %v, want %v", at, ok, f.Mode, mode)
		}
	}
}
