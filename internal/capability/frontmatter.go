package capability

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLineRE = regexp.MustCompile(`^line (\d+)`)

// SkillFile is the file that makes a directory a skill.
const SkillFile = "SKILL.md"

// frontmatter returns the YAML frontmatter of a markdown file as a
// mapping: the text between a first line "---" and the next line "---".
// Keys other than the ones paddock reads are allowed: the harnesses define
// more of them.
func (v *validator) frontmatter(p string) (walker, map[string]*yaml.Node, bool) {
	w := walker{v: v, file: p, prefix: "frontmatter"}
	data := v.files[p].Data
	if len(data) > maxManifestBytes {
		w.add("", "the file is larger than %d bytes", maxManifestBytes)
		return w, nil, false
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		w.add("", "missing (the file must start with a line \"---\")")
		return w, nil, false
	}
	var yamlText []byte
	closed := false
	for len(rest) > 0 && !closed {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			closed = true
			break
		}
		yamlText = append(append(yamlText, line...), '\n')
	}
	if !closed {
		w.add("", "not closed (no second line \"---\")")
		return w, nil, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yamlText, &doc); err != nil {
		// Lines count from the file's first line, the "---" before the YAML.
		msg := yamlLineRE.ReplaceAllStringFunc(yamlError(err), func(s string) string {
			n, _ := strconv.Atoi(yamlLineRE.FindStringSubmatch(s)[1])
			return "line " + strconv.Itoa(n+1)
		})
		w.add("", "%s", msg)
		return w, nil, false
	}
	if len(doc.Content) == 0 {
		w.add("", "empty")
		return w, nil, false
	}
	m := w.mapping(doc.Content[0], "")
	return w, m, m != nil
}

// agent reads an agent definition's frontmatter: name and description are
// required; model, tools and skills are optional.
func (v *validator) agent(p string) (Agent, bool) {
	w, m, ok := v.frontmatter(p)
	if !ok {
		return Agent{}, false
	}
	name, ok1 := w.name(m["name"], "name")
	desc, ok2 := w.str(m["description"], "description", true)
	model, ok3 := w.str(m["model"], "model", false)
	tools, ok4 := w.names(m["tools"], "tools")
	skills, ok5 := w.names(m["skills"], "skills")
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return Agent{}, false
	}
	return Agent{Name: name, Description: strings.TrimSpace(desc), Model: model, Tools: tools, Skills: skills, Path: p}, true
}

// skill reads a skill's SKILL.md; its name must be its directory's.
func (v *validator) skill(dir string) (Skill, bool) {
	w, m, ok := v.frontmatter(dir + "/" + SkillFile)
	if !ok {
		return Skill{}, false
	}
	name, ok1 := w.name(m["name"], "name")
	desc, ok2 := w.str(m["description"], "description", true)
	if ok1 && name != path.Base(dir) {
		w.add("name", "%q is not the name of its directory %q", name, path.Base(dir))
		ok1 = false
	}
	if !ok1 || !ok2 {
		return Skill{}, false
	}
	return Skill{Name: name, Description: strings.TrimSpace(desc), Dir: dir}, true
}

// mcpFile reads MCP server definitions from a JSON file in the format
// Claude Code uses for .mcp.json: {"mcpServers": {name: {type, command,
// args, env, url}}}. Keys outside that set are problems, as in
// capability.yaml.
func (v *validator) mcpFile(p string) []MCPServer {
	w := walker{v: v, file: p}
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if !decodeStrict(w, "", v.files[p].Data, &top) {
		return nil
	}
	if top.MCPServers == nil {
		w.add("mcpServers", "required")
		return nil
	}
	var out []MCPServer
	for _, name := range slices.Sorted(maps.Keys(top.MCPServers)) {
		at := field("mcpServers", name)
		var s struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
		}
		if !decodeStrict(w, at, top.MCPServers[name], &s) {
			continue
		}
		srv, ok := v.server(w, at, MCPServer{Name: name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL})
		if ok {
			out = append(out, srv)
		}
	}
	return out
}

// decodeStrict decodes one JSON value, refusing unknown fields and
// trailing data.
func decodeStrict(w walker, at string, data []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			w.add(at, "empty")
		} else {
			w.add(at, "%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		w.add(at, "data after the JSON value")
		return false
	}
	return true
}
