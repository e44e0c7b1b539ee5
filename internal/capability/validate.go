package capability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Script time limits.
const (
	DefaultSetupTimeout = 300 * time.Second
	DefaultCheckTimeout = 30 * time.Second
	MaxScriptTimeout    = 3600 * time.Second
)

// Environment variables paddock sets for workers, setup scripts and checks.
const (
	EnvDir        = "CAPABILITY_DIR"
	EnvName       = "CAPABILITY_NAME"
	EnvVersion    = "CAPABILITY_VERSION"
	EnvFlagPrefix = "CAPABILITY_FLAG_"
)

// dirVar is replaced by the bundle's directory in the sandbox, in MCP
// server definitions and worker env values.
const dirVar = "${" + EnvDir + "}"

// validator collects a bundle's files, then checks them and its manifest,
// recording every problem rather than stopping at the first.
type validator struct {
	files    map[string]File
	specials map[string]string // path: "symlink", "special file", ...
	exec     map[string]bool   // files that must be executable: tools, MCP commands
	problems []Problem
}

func newValidator() *validator {
	return &validator{files: map[string]File{}, specials: map[string]string{}, exec: map[string]bool{}}
}

func (v *validator) add(file, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: file, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) addFile(f File) {
	if _, dup := v.files[f.Path]; dup {
		v.add(f.Path, "duplicate file")
		return
	}
	v.files[f.Path] = f
}

// special records a file that is not a regular file; it is a problem
// wherever it is.
func (v *validator) special(p, kind string) {
	v.specials[p] = kind
	v.add(p, "%ss are not allowed", kind)
}

// bundle validates the collected files and builds the bundle.
func (v *validator) bundle() (*Bundle, error) {
	b := &Bundle{}
	if m, ok := v.files[ManifestName]; ok {
		v.manifest(b, m.Data)
	} else if _, ok := v.specials[ManifestName]; !ok {
		v.add(ManifestName, "not found at the root of the bundle")
	}
	if len(v.problems) > 0 {
		return nil, &ValidationError{Problems: v.problems}
	}
	b.Files = make([]File, 0, len(v.files))
	for _, p := range slices.Sorted(maps.Keys(v.files)) {
		f := v.files[p]
		if v.exec[p] {
			f.Mode = 0o755
		}
		b.Files = append(b.Files, f)
	}
	b.Digest = digest(b.Files)
	return b, nil
}

// manifest reads capability.yaml into b.
func (v *validator) manifest(b *Bundle, data []byte) {
	w := walker{v: v, file: ManifestName}
	if len(data) > maxManifestBytes {
		w.add("", "larger than %d bytes", maxManifestBytes)
		return
	}
	top := v.parseYAML(w, data)
	if top == nil {
		return
	}
	// The schema version decides what the rest means: check it alone.
	var version *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "schema_version" {
			version = top.Content[i+1]
		}
	}
	switch n, present, ok := w.integer(version, "schema_version"); {
	case !ok:
		return
	case !present:
		w.add("schema_version", "required")
		return
	case n != SchemaVersion:
		w.add("schema_version", "%d is not supported (this paddock reads schema version %d)", n, SchemaVersion)
		return
	}

	m := w.mapping(top, "", "schema_version", "name", "version", "description",
		"agents", "skills", "tools", "mcp", "mcp_servers", "flags", "workers", "dependencies")
	if s, ok := w.str(m["name"], "name", true); ok {
		if ValidName(s) {
			b.Name = s
		} else {
			w.add("name", "%q is not a valid capability name (lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters; not bin, codex or gemini)", s)
		}
	}
	if s, ok := w.str(m["version"], "version", true); ok {
		if ValidVersion(s) {
			b.Version = s
		} else {
			w.add("version", "%q is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])", s)
		}
	}
	if s, ok := w.line(m["description"], "description", true); ok {
		b.Description = s
	}

	flags := v.flags(w, b, m["flags"])
	v.agents(w, b, m["agents"])
	v.skills(w, b, m["skills"])
	v.tools(w, b, m["tools"])
	v.mcpServers(w, b, m["mcp"], m["mcp_servers"], flags)
	v.workers(w, b, m["workers"], flags)
	deps := w.mapping(m["dependencies"], "dependencies", "setup", "checks")
	b.Setup = v.scripts(w, deps["setup"], "dependencies.setup", DefaultSetupTimeout)
	b.Checks = v.scripts(w, deps["checks"], "dependencies.checks", DefaultCheckTimeout)
}

// parseYAML parses one YAML document whose top level is a mapping.
func (v *validator) parseYAML(w walker, data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			w.add("", "empty")
		} else {
			w.add("", "%s", yamlError(err))
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		w.add("", "more than one YAML document")
		return nil
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		w.add("", "must be a mapping")
		return nil
	}
	return doc.Content[0]
}

func yamlError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// flags reads the flags section and returns the declared names.
func (v *validator) flags(w walker, b *Bundle, n *yaml.Node) map[string]bool {
	declared := map[string]bool{}
	envs := map[string]string{}
	for _, e := range w.entries(n, "flags") {
		at := field("flags", e.key)
		if !validItemName(e.key) {
			w.add(at, "%q is not a valid name (%s)", e.key, itemNameRule)
			continue
		}
		declared[e.key] = true
		if other, dup := envs[FlagEnv(e.key)]; dup {
			w.add(at, "has the same environment variable as flag %q (%s)", other, FlagEnv(e.key))
		}
		envs[FlagEnv(e.key)] = e.key
		m := w.mapping(e.val, at, "description", "default")
		if m == nil {
			continue
		}
		desc, ok1 := w.line(m["description"], field(at, "description"), true)
		def, ok2 := w.boolean(m["default"], field(at, "default"))
		if ok1 && ok2 {
			b.Flags = append(b.Flags, Flag{Name: e.key, Description: desc, Default: def})
		}
	}
	slices.SortFunc(b.Flags, func(a, b Flag) int { return strings.Compare(a.Name, b.Name) })
	return declared
}

// FlagEnv is the environment variable that carries a flag's value to
// workers and scripts: CAPABILITY_FLAG_ and the name in upper case, with
// '.' and '-' written as '_'.
func FlagEnv(flag string) string {
	return EnvFlagPrefix + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r == '.' || r == '-':
			return '_'
		}
		return r
	}, flag)
}

func (v *validator) flagRef(w walker, n *yaml.Node, at string, declared map[string]bool) (string, bool) {
	s, ok := w.str(n, at, false)
	if !ok || s == "" {
		return "", ok
	}
	if !declared[s] {
		w.add(at, "%q is not a declared flag", s)
		return "", false
	}
	return s, true
}

func (v *validator) agents(w walker, b *Bundle, n *yaml.Node) {
	paths := map[string]bool{}
	names := map[string]string{}
	for i, item := range w.list(n, "agents") {
		at := index("agents", i)
		p, ok := v.ref(w, item, at, wantFile)
		if !ok {
			continue
		}
		if path.Ext(p) != ".md" {
			w.add(at, "%q: an agent definition is a markdown file (.md)", p)
			continue
		}
		if paths[p] {
			w.add(at, "%q is listed twice", p)
			continue
		}
		paths[p] = true
		a, ok := v.agent(p)
		if !ok {
			continue
		}
		if other, dup := names[a.Name]; dup {
			w.add(at, "agent name %q is already used by %s", a.Name, other)
			continue
		}
		names[a.Name] = p
		b.Agents = append(b.Agents, a)
	}
}

func (v *validator) skills(w walker, b *Bundle, n *yaml.Node) {
	names := map[string]string{}
	for i, item := range w.list(n, "skills") {
		at := index("skills", i)
		dir, ok := v.ref(w, item, at, wantDir)
		if !ok {
			continue
		}
		if _, ok := v.files[dir+"/"+SkillFile]; !ok {
			w.add(at, "%q has no %s", dir, SkillFile)
			continue
		}
		if other, dup := names[path.Base(dir)]; dup {
			w.add(at, "skill name %q is already used by %s", path.Base(dir), other)
			continue
		}
		names[path.Base(dir)] = dir
		if s, ok := v.skill(dir); ok {
			b.Skills = append(b.Skills, s)
		}
	}
}

func (v *validator) tools(w walker, b *Bundle, n *yaml.Node) {
	names := map[string]bool{}
	for i, item := range w.list(n, "tools") {
		at := index("tools", i)
		m := w.mapping(item, at, "name", "path", "description")
		if m == nil {
			continue
		}
		name, ok1 := w.name(m["name"], field(at, "name"))
		p, ok2 := v.ref(w, m["path"], field(at, "path"), wantFile)
		desc, ok3 := w.line(m["description"], field(at, "description"), true)
		if ok1 && names[name] {
			w.add(field(at, "name"), "duplicate tool name %q", name)
			continue
		}
		names[name] = true
		if ok1 && ok2 && ok3 {
			v.exec[p] = true
			b.Tools = append(b.Tools, Tool{Name: name, Description: desc, Path: p})
		}
	}
}

func (v *validator) mcpServers(w walker, b *Bundle, file, inline *yaml.Node, flags map[string]bool) {
	servers := map[string]MCPServer{}
	var mcpFile string
	if !isNull(file) {
		if p, ok := v.ref(w, file, "mcp", wantFile); ok {
			mcpFile = p
			for _, s := range v.mcpFile(p) {
				servers[s.Name] = s
			}
		}
	}
	for _, e := range w.entries(inline, "mcp_servers") {
		at := field("mcp_servers", e.key)
		if _, dup := servers[e.key]; dup {
			w.add(at, "also defined in %s", mcpFile)
			continue
		}
		m := w.mapping(e.val, at, "type", "command", "args", "env", "url", "flag")
		if m == nil {
			continue
		}
		typ, ok1 := w.str(m["type"], field(at, "type"), false)
		command, ok2 := w.str(m["command"], field(at, "command"), false)
		args, ok3 := w.strList(m["args"], field(at, "args"))
		env, ok4 := w.strMap(m["env"], field(at, "env"))
		u, ok5 := w.str(m["url"], field(at, "url"), false)
		flag, ok6 := v.flagRef(w, m["flag"], field(at, "flag"), flags)
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
			continue
		}
		s, ok := v.server(w, at, MCPServer{Name: e.key, Type: typ, Command: command, Args: args, Env: env, URL: u, Flag: flag})
		if ok {
			servers[e.key] = s
		}
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		b.MCPServers = append(b.MCPServers, servers[name])
	}
}

// server checks an MCP server definition, from capability.yaml or an MCP
// JSON file, and fills in its type.
func (v *validator) server(w walker, at string, s MCPServer) (MCPServer, bool) {
	ok := true
	bad := func(where, format string, args ...any) {
		w.add(where, format, args...)
		ok = false
	}
	if !validItemName(s.Name) {
		bad(at, "%q is not a valid name (%s)", s.Name, itemNameRule)
	}
	if slices.Contains(ReservedMCPServers, s.Name) {
		bad(at, "%q is reserved: paddock's sidecar capabilities give harnesses an MCP server of that name", s.Name)
	}
	switch s.Type {
	case "":
		s.Type = MCPStdio
		if s.URL != "" && s.Command == "" {
			s.Type = MCPHTTP
		}
	case MCPStdio, MCPHTTP:
	default:
		bad(field(at, "type"), "%q is not supported (use %q or %q)", s.Type, MCPStdio, MCPHTTP)
		return s, false
	}
	switch s.Type {
	case MCPStdio:
		if strings.TrimSpace(s.Command) == "" {
			bad(field(at, "command"), "required")
		} else if p, isRef := bundleRef(s.Command); isRef {
			if msg := v.exists(p, wantFile); msg != "" {
				bad(field(at, "command"), "%s", msg)
			} else {
				v.exec[p] = true
			}
		}
		for i, arg := range s.Args {
			if p, isRef := bundleRef(arg); isRef && strings.HasPrefix(arg, dirVar) {
				if msg := v.exists(p, wantAny); msg != "" {
					bad(index(field(at, "args"), i), "%s", msg)
				}
			}
		}
		if s.URL != "" {
			bad(field(at, "url"), "only for http servers")
		}
	case MCPHTTP:
		if s.URL == "" {
			bad(field(at, "url"), "required")
		} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(field(at, "url"), "%q is not an http or https URL", s.URL)
		}
		if s.Command != "" {
			bad(field(at, "command"), "only for stdio servers")
		}
		if len(s.Args) > 0 {
			bad(field(at, "args"), "only for stdio servers")
		}
		if len(s.Env) > 0 {
			bad(field(at, "env"), "only for stdio servers")
		}
	}
	if !checkEnv(w, field(at, "env"), s.Env, false) {
		ok = false
	}
	return s, ok
}

// bundleRef reports whether s names a file of the bundle: "./x" or
// "${CAPABILITY_DIR}/x" with no other variable in it.
func bundleRef(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, dirVar+"/")
	if !ok {
		rest, ok = strings.CutPrefix(s, "./")
	}
	if !ok || strings.Contains(rest, "$") || rest == "" {
		return "", false
	}
	return path.Clean(rest), true
}

// checkEnv checks environment variable names; reserved ones are those
// paddock sets itself.
func checkEnv(w walker, at string, env map[string]string, reserved bool) bool {
	ok := true
	for _, k := range slices.Sorted(maps.Keys(env)) {
		switch {
		case !envNameRE.MatchString(k):
			w.add(field(at, k), "not a valid environment variable name")
			ok = false
		case reserved && (k == EnvDir || k == EnvName || k == EnvVersion || strings.HasPrefix(k, EnvFlagPrefix)):
			w.add(field(at, k), "set by paddock; a capability cannot set it")
			ok = false
		}
	}
	return ok
}

func (v *validator) workers(w walker, b *Bundle, n *yaml.Node, flags map[string]bool) {
	names := map[string]bool{}
	for i, item := range w.list(n, "workers") {
		at := index("workers", i)
		m := w.mapping(item, at, "name", "run", "flag", "env")
		if m == nil {
			continue
		}
		name, ok1 := w.name(m["name"], field(at, "name"))
		run, ok2 := w.str(m["run"], field(at, "run"), true)
		flag, ok3 := v.flagRef(w, m["flag"], field(at, "flag"), flags)
		env, ok4 := w.strMap(m["env"], field(at, "env"))
		ok4 = ok4 && checkEnv(w, field(at, "env"), env, true)
		if ok1 && names[name] {
			w.add(field(at, "name"), "duplicate worker name %q", name)
			continue
		}
		names[name] = true
		if ok1 && ok2 && ok3 && ok4 {
			b.Workers = append(b.Workers, Worker{Name: name, Run: run, Flag: flag, Env: env})
		}
	}
}

func (v *validator) scripts(w walker, n *yaml.Node, at string, timeout time.Duration) []Script {
	var out []Script
	names := map[string]bool{}
	for i, item := range w.list(n, at) {
		at := index(at, i)
		m := w.mapping(item, at, "name", "run", "timeout_seconds")
		if m == nil {
			continue
		}
		name, ok1 := w.name(m["name"], field(at, "name"))
		run, ok2 := w.str(m["run"], field(at, "run"), true)
		secs, present, ok3 := w.integer(m["timeout_seconds"], field(at, "timeout_seconds"))
		t := timeout
		if ok3 && present {
			t = time.Duration(secs) * time.Second
			if secs < 1 || t > MaxScriptTimeout {
				w.add(field(at, "timeout_seconds"), "must be between 1 and %d", int(MaxScriptTimeout/time.Second))
				ok3 = false
			}
		}
		if ok1 && names[name] {
			w.add(field(at, "name"), "duplicate name %q", name)
			continue
		}
		names[name] = true
		if ok1 && ok2 && ok3 {
			out = append(out, Script{Name: name, Run: run, Timeout: t})
		}
	}
	return out
}

// What a path in the manifest must name.
type want int

const (
	wantFile want = iota
	wantDir
	wantAny
)

// ref reads a required path to something in the bundle and returns it
// cleaned.
func (v *validator) ref(w walker, n *yaml.Node, at string, kind want) (string, bool) {
	s, ok := w.str(n, at, true)
	if !ok {
		return "", false
	}
	switch {
	case strings.Contains(s, `\`):
		w.add(at, "%q: use '/' to separate directories", s)
		return "", false
	case path.IsAbs(s):
		w.add(at, "%q must be relative to the bundle", s)
		return "", false
	case slices.Contains(strings.Split(s, "/"), ".."):
		w.add(at, "%q escapes the bundle ('..')", s)
		return "", false
	}
	p := path.Clean(s)
	if p == "." {
		w.add(at, "%q is the bundle itself", s)
		return "", false
	}
	if msg := v.exists(p, kind); msg != "" {
		w.add(at, "%s", msg)
		return "", false
	}
	return p, true
}

// exists says what is wrong when p is not the kind of thing wanted.
func (v *validator) exists(p string, kind want) string {
	_, isFile := v.files[p]
	isDir := v.isDir(p)
	if special, ok := v.specials[p]; ok {
		return fmt.Sprintf("%q is a %s, not a regular file", p, special)
	}
	switch {
	case kind == wantFile && isFile, kind == wantDir && isDir, kind == wantAny && (isFile || isDir):
		return ""
	case kind == wantFile && isDir:
		return fmt.Sprintf("%q is a directory, not a file", p)
	case kind == wantDir && isFile:
		return fmt.Sprintf("%q is a file, not a directory", p)
	}
	return fmt.Sprintf("%q is not in the bundle", p)
}

func (v *validator) isDir(p string) bool {
	for f := range v.files {
		if strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}
