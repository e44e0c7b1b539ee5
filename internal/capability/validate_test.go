package capability

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// head is the smallest valid manifest; cases append sections to it.
const head = "schema_version: 1\nname: t\nversion: 1.0.0\ndescription: d\n"

const agentMD = "---\nname: rev\ndescription: Reviews.\n---\nYou review.\n"

// bundleFS is a bundle's files: path to content; a path ending in "*" is
// executable (without the star).
func bundleFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, data := range files {
		mode := fs.FileMode(0o644)
		if name, ok := strings.CutSuffix(p, "*"); ok {
			p, mode = name, 0o755
		}
		fsys[p] = &fstest.MapFile{Data: []byte(data), Mode: mode}
	}
	return fsys
}

func mustLoad(t *testing.T, files map[string]string) *Bundle {
	t.Helper()
	b, err := Load(bundleFS(files))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// problems returns the problems of err, a *ValidationError, as strings,
// sorted.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	slices.Sort(out)
	return out
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // capability.yaml is the manifest
		want  []string
	}{
		{
			name:  "no manifest",
			files: map[string]string{"README.md": "x"},
			want:  []string{"capability.yaml: not found at the root of the bundle"},
		},
		{
			name:  "yaml syntax",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: [\n"},
			want:  []string{"capability.yaml: line 2: did not find expected node content"},
		},
		{
			name:  "empty manifest",
			files: map[string]string{"capability.yaml": ""},
			want:  []string{"capability.yaml: empty"},
		},
		{
			name:  "not a mapping",
			files: map[string]string{"capability.yaml": "- a\n"},
			want:  []string{"capability.yaml: must be a mapping"},
		},
		{
			name:  "two documents",
			files: map[string]string{"capability.yaml": head + "---\nname: u\n"},
			want:  []string{"capability.yaml: more than one YAML document"},
		},
		{
			name:  "schema version missing",
			files: map[string]string{"capability.yaml": "name: t\nversion: 1.0.0\n"},
			want:  []string{"capability.yaml: schema_version: required"},
		},
		{
			name:  "schema version unsupported: nothing else is checked",
			files: map[string]string{"capability.yaml": "schema_version: 2\nsomething: new\n"},
			want:  []string{"capability.yaml: schema_version: 2 is not supported (this paddock reads schema version 1)"},
		},
		{
			name:  "schema version not an integer",
			files: map[string]string{"capability.yaml": "schema_version: \"1\"\n"},
			want:  []string{"capability.yaml: schema_version: must be an integer"},
		},
		{
			name:  "required fields",
			files: map[string]string{"capability.yaml": "schema_version: 1\ndescription: \"  \"\n"},
			want: []string{
				"capability.yaml: description: required",
				"capability.yaml: name: required",
				"capability.yaml: version: required",
			},
		},
		{
			name:  "unknown keys",
			files: map[string]string{"capability.yaml": head + "colour: red\nworkers:\n  - nme: w\n    run: x\ndependencies:\n  teardown: []\n"},
			want: []string{
				"capability.yaml: colour: unknown field",
				"capability.yaml: dependencies.teardown: unknown field",
				"capability.yaml: workers[0].name: required",
				"capability.yaml: workers[0].nme: unknown field",
			},
		},
		{
			name:  "duplicate key",
			files: map[string]string{"capability.yaml": head + "name: u\n"},
			want:  []string{"capability.yaml: name: duplicate key"},
		},
		{
			name: "wrong types",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: t\nversion: 1.0.0\ndescription: 12\n" +
				"agents: agents/a.md\n" +
				"tools: {name: x}\n" +
				"flags:\n  f:\n    description: x\n    default: \"yes\"\n" +
				"mcp_servers:\n  s:\n    command: x\n    args: x\n    env: {A: 1}\n" +
				"dependencies:\n  setup:\n    - name: s\n      run: [x]\n      timeout_seconds: \"10\"\n"},
			want: []string{
				"capability.yaml: agents: must be a list",
				"capability.yaml: dependencies.setup[0].run: must be a string",
				"capability.yaml: dependencies.setup[0].timeout_seconds: must be an integer",
				"capability.yaml: description: must be a string",
				"capability.yaml: flags.f.default: must be true or false",
				"capability.yaml: mcp_servers.s.args: must be a list of strings",
				"capability.yaml: mcp_servers.s.env.A: must be a string",
				"capability.yaml: tools: must be a list",
			},
		},
		{
			name:  "description on two lines",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: t\nversion: 1.0.0\ndescription: |\n  one\n  two\n"},
			want:  []string{"capability.yaml: description: must be one line"},
		},
		{
			name:  "aliases",
			files: map[string]string{"capability.yaml": head + "flags:\n  a: &x {description: d}\n  b: *x\n"},
			want:  []string{"capability.yaml: flags.b: anchors and aliases are not supported"},
		},
		{
			name:  "bad semver",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: t\nversion: \"01.2.3\"\ndescription: d\n"},
			want:  []string{`capability.yaml: version: "01.2.3" is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])`},
		},
		{
			name:  "bad capability name",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: Repo_Tools\nversion: 1.0.0\ndescription: d\n"},
			want:  []string{`capability.yaml: name: "Repo_Tools" is not a valid capability name (lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters; not bin, codex or gemini)`},
		},
		{
			name:  "reserved capability name",
			files: map[string]string{"capability.yaml": "schema_version: 1\nname: bin\nversion: 1.0.0\ndescription: d\n"},
			want:  []string{`capability.yaml: name: "bin" is not a valid capability name (lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters; not bin, codex or gemini)`},
		},
		{
			name: "bad item names",
			files: map[string]string{
				"capability.yaml": head + "tools:\n  - {name: -x, path: t, description: d}\n" +
					"workers:\n  - {name: \"a b\", run: x}\n" +
					"flags:\n  \"f/g\": {description: d}\n" +
					"mcp_servers:\n  \".s\": {command: x}\n",
				"t": "",
			},
			want: []string{
				`capability.yaml: flags.f/g: "f/g" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters)`,
				`capability.yaml: mcp_servers..s: ".s" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters)`,
				`capability.yaml: tools[0].name: "-x" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters)`,
				`capability.yaml: workers[0].name: "a b" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters)`,
			},
		},
		{
			name: "duplicate names within a kind",
			files: map[string]string{
				"capability.yaml": head + "tools:\n  - {name: x, path: t, description: d}\n  - {name: x, path: t, description: d}\n" +
					"workers:\n  - {name: w, run: a}\n  - {name: w, run: b}\n" +
					"dependencies:\n  setup:\n    - {name: s, run: a}\n    - {name: s, run: b}\n  checks:\n    - {name: s, run: a}\n",
				"t": "",
			},
			want: []string{
				`capability.yaml: dependencies.setup[1].name: duplicate name "s"`,
				`capability.yaml: tools[1].name: duplicate tool name "x"`,
				`capability.yaml: workers[1].name: duplicate worker name "w"`,
			},
		},
		{
			name: "references to files not in the bundle",
			files: map[string]string{
				"capability.yaml": head + "agents: [agents/missing.md]\nskills: [skills/missing]\n" +
					"tools:\n  - {name: x, path: tools/missing, description: d}\nmcp: missing.json\n",
			},
			want: []string{
				`capability.yaml: agents[0]: "agents/missing.md" is not in the bundle`,
				`capability.yaml: mcp: "missing.json" is not in the bundle`,
				`capability.yaml: skills[0]: "skills/missing" is not in the bundle`,
				`capability.yaml: tools[0].path: "tools/missing" is not in the bundle`,
			},
		},
		{
			name: "paths escaping the bundle",
			files: map[string]string{
				"capability.yaml": head + "tools:\n" +
					"  - {name: a, path: ../x, description: d}\n" +
					"  - {name: b, path: /etc/passwd, description: d}\n" +
					"  - {name: c, path: 'tools\\x', description: d}\n" +
					"  - {name: d, path: tools/../../x, description: d}\n" +
					"  - {name: e, path: ., description: d}\n",
			},
			want: []string{
				`capability.yaml: tools[0].path: "../x" escapes the bundle ('..')`,
				`capability.yaml: tools[1].path: "/etc/passwd" must be relative to the bundle`,
				`capability.yaml: tools[2].path: "tools\\x": use '/' to separate directories`,
				`capability.yaml: tools[3].path: "tools/../../x" escapes the bundle ('..')`,
				`capability.yaml: tools[4].path: "." is the bundle itself`,
			},
		},
		{
			name: "a tool that is a directory, a skill that is a file",
			files: map[string]string{
				"capability.yaml": head + "tools:\n  - {name: x, path: tools, description: d}\nskills: [tools/x]\n",
				"tools/x":         "",
			},
			want: []string{
				`capability.yaml: skills[0]: "tools/x" is a file, not a directory`,
				`capability.yaml: tools[0].path: "tools" is a directory, not a file`,
			},
		},
		{
			name: "undeclared flags",
			files: map[string]string{
				"capability.yaml": head + "flags:\n  memory: {description: d}\n" +
					"mcp_servers:\n  memory: {command: x, flag: nope}\n" +
					"workers:\n  - {name: w, run: x, flag: Memory}\n",
			},
			want: []string{
				`capability.yaml: mcp_servers.memory.flag: "nope" is not a declared flag`,
				`capability.yaml: workers[0].flag: "Memory" is not a declared flag`,
			},
		},
		{
			name:  "flags sharing an environment variable",
			files: map[string]string{"capability.yaml": head + "flags:\n  a-b: {description: d}\n  a.b: {description: d}\n"},
			want:  []string{`capability.yaml: flags.a.b: has the same environment variable as flag "a-b" (CAPABILITY_FLAG_A_B)`},
		},
		{
			name:  "flag without a description",
			files: map[string]string{"capability.yaml": head + "flags:\n  a: {default: true}\n"},
			want:  []string{"capability.yaml: flags.a.description: required"},
		},
		{
			name: "MCP server in the file and inline",
			files: map[string]string{
				"capability.yaml": head + "mcp: .mcp.json\nmcp_servers:\n  memory: {command: x}\n",
				".mcp.json":       `{"mcpServers": {"memory": {"command": "y"}}}`,
			},
			want: []string{"capability.yaml: mcp_servers.memory: also defined in .mcp.json"},
		},
		{
			name: "MCP file problems",
			files: map[string]string{
				"capability.yaml": head + "mcp: .mcp.json\n",
				".mcp.json": `{"mcpServers": {
					"a": {"type": "http", "url": "https://x/mcp", "headers": {"K": "V"}},
					"b": {"type": "sse", "url": "https://x/sse"},
					"c": {"type": "http", "url": "https://x/mcp", "command": "x"},
					"d": {"args": 1}
				}}`,
			},
			want: []string{
				`.mcp.json: mcpServers.a: unknown field "headers"`,
				`.mcp.json: mcpServers.b.type: "sse" is not supported (use "stdio" or "http")`,
				`.mcp.json: mcpServers.c.command: only for stdio servers`,
				`.mcp.json: mcpServers.d: cannot unmarshal number into Go struct field .args of type []string`,
			},
		},
		{
			name: "MCP file not JSON",
			files: map[string]string{
				"capability.yaml": head + "mcp: .mcp.json\n",
				".mcp.json":       `{"mcpServers": {}} {}`,
			},
			want: []string{".mcp.json: data after the JSON value"},
		},
		{
			name: "MCP file without servers",
			files: map[string]string{
				"capability.yaml": head + "mcp: .mcp.json\n",
				".mcp.json":       `{"servers": {}}`,
			},
			want: []string{`.mcp.json: unknown field "servers"`},
		},
		{
			name: "inline MCP server problems",
			files: map[string]string{
				"capability.yaml": head + "mcp_servers:\n" +
					"  a: {}\n" +
					"  b: {url: ftp://x}\n" +
					"  c: {command: x, url: https://x}\n" +
					"  d: {url: https://x, env: {K: V}, args: [a]}\n" +
					"  e: {command: ./bin/server}\n" +
					"  f: {command: python3, args: [\"${CAPABILITY_DIR}/mcp/x.py\", \"./not-checked\"]}\n" +
					"  g: {command: x, env: {1BAD: v}}\n",
			},
			want: []string{
				`capability.yaml: mcp_servers.a.command: required`,
				`capability.yaml: mcp_servers.b.url: "ftp://x" is not an http or https URL`,
				`capability.yaml: mcp_servers.c.url: only for http servers`,
				`capability.yaml: mcp_servers.d.args: only for stdio servers`,
				`capability.yaml: mcp_servers.d.env: only for stdio servers`,
				`capability.yaml: mcp_servers.e.command: "bin/server" is not in the bundle`,
				`capability.yaml: mcp_servers.f.args[0]: "mcp/x.py" is not in the bundle`,
				`capability.yaml: mcp_servers.g.env.1BAD: not a valid environment variable name`,
			},
		},
		{
			name: "worker env",
			files: map[string]string{
				"capability.yaml": head + "workers:\n  - name: w\n    run: x\n    env: {CAPABILITY_DIR: /, CAPABILITY_FLAG_X: \"1\", \"A-B\": c}\n",
			},
			want: []string{
				"capability.yaml: workers[0].env.A-B: not a valid environment variable name",
				"capability.yaml: workers[0].env.CAPABILITY_DIR: set by paddock; a capability cannot set it",
				"capability.yaml: workers[0].env.CAPABILITY_FLAG_X: set by paddock; a capability cannot set it",
			},
		},
		{
			name: "script timeouts and required run",
			files: map[string]string{
				"capability.yaml": head + "dependencies:\n  setup:\n    - {name: a, run: x, timeout_seconds: 0}\n    - {name: b, run: x, timeout_seconds: 3601}\n" +
					"  checks:\n    - {name: c}\n",
			},
			want: []string{
				"capability.yaml: dependencies.checks[0].run: required",
				"capability.yaml: dependencies.setup[0].timeout_seconds: must be between 1 and 3600",
				"capability.yaml: dependencies.setup[1].timeout_seconds: must be between 1 and 3600",
			},
		},
		{
			name: "agent frontmatter",
			files: map[string]string{
				"capability.yaml":   head + "agents: [agents/none.md, agents/open.md, agents/nodesc.md, agents/types.md, agents/badname.md, agents/notyaml.md, agents/a.txt, agents/syntax.md]\n",
				"agents/none.md":    "You review.\n",
				"agents/open.md":    "---\nname: x\n",
				"agents/nodesc.md":  "---\nname: x\n---\nbody\n",
				"agents/types.md":   "---\nname: y\ndescription: d\ntools: {a: b}\nmodel: [m]\n---\n",
				"agents/badname.md": "---\nname: a/b\ndescription: d\n---\n",
				"agents/notyaml.md": "---\ndescription: use when: x\n---\n",
				"agents/a.txt":      "x",
				"agents/syntax.md":  "---\nname: x\ndescription: [\n---\n",
			},
			want: []string{
				`agents/badname.md: frontmatter: name: "a/b" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters)`,
				`agents/nodesc.md: frontmatter: description: required`,
				`agents/none.md: frontmatter: missing (the file must start with a line "---")`,
				`agents/notyaml.md: frontmatter: mapping values are not allowed in this context`,
				`agents/open.md: frontmatter: not closed (no second line "---")`,
				`agents/syntax.md: frontmatter: line 3: did not find expected node content`,
				`agents/types.md: frontmatter: model: must be a string`,
				`agents/types.md: frontmatter: tools: must be a list of strings or a comma-separated string`,
				`capability.yaml: agents[6]: "agents/a.txt": an agent definition is a markdown file (.md)`,
			},
		},
		{
			name: "duplicate agents",
			files: map[string]string{
				"capability.yaml": head + "agents: [agents/a.md, agents/b.md, agents/a.md]\n",
				"agents/a.md":     agentMD,
				"agents/b.md":     agentMD,
			},
			want: []string{
				`capability.yaml: agents[1]: agent name "rev" is already used by agents/a.md`,
				`capability.yaml: agents[2]: "agents/a.md" is listed twice`,
			},
		},
		{
			name: "skill frontmatter",
			files: map[string]string{
				"capability.yaml":       head + "skills: [skills/a, skills/b, skills/c, other/a]\n",
				"skills/a/SKILL.md":     "---\nname: b\ndescription: d\n---\n",
				"skills/b/SKILL.md":     "---\nname: b\n---\n",
				"skills/c/notes.md":     "x",
				"other/a/SKILL.md":      "---\nname: a\ndescription: d\n---\n",
				"skills/b/reference.md": "x",
			},
			want: []string{
				`capability.yaml: skills[2]: "skills/c" has no SKILL.md`,
				`capability.yaml: skills[3]: skill name "a" is already used by skills/a`,
				`skills/a/SKILL.md: frontmatter: name: "b" is not the name of its directory "a"`,
				`skills/b/SKILL.md: frontmatter: description: required`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Load(bundleFS(tt.files))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", b)
			}
			if got := problems(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestLoadCollectsEveryProblem checks that one bundle with problems in
// many places reports all of them, not the first.
func TestLoadCollectsEveryProblem(t *testing.T) {
	_, err := Load(bundleFS(map[string]string{
		"capability.yaml": "schema_version: 1\nname: Bad\nversion: v1\ndescription: d\nextra: 1\n" +
			"agents: [agents/a.md]\nskills: [skills/s]\n" +
			"tools:\n  - {name: t, path: ../t, description: d}\n" +
			"mcp_servers:\n  memory: {command: python3, flag: nope}\n" +
			"workers:\n  - {name: w}\n",
		"agents/a.md":       "---\nname: a\n---\n",
		"skills/s/SKILL.md": "no frontmatter",
	}))
	want := []string{
		`agents/a.md: frontmatter: description: required`,
		`capability.yaml: extra: unknown field`,
		`capability.yaml: mcp_servers.memory.flag: "nope" is not a declared flag`,
		`capability.yaml: name: "Bad" is not a valid capability name (lower-case letters, digits and '-', starting with a letter or digit, at most 63 characters; not bin, codex or gemini)`,
		`capability.yaml: tools[0].path: "../t" escapes the bundle ('..')`,
		`capability.yaml: version: "v1" is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])`,
		`capability.yaml: workers[0].run: required`,
		`skills/s/SKILL.md: frontmatter: missing (the file must start with a line "---")`,
	}
	if got := problems(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
	wantErr := "invalid capability: capability.yaml: extra: unknown field; "
	if !strings.HasPrefix(err.Error(), wantErr) {
		t.Errorf("Error() = %q, want it to start with %q", err.Error(), wantErr)
	}
}

func TestLoadRefusesSymlinksAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(p, data string, mode os.FileMode) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("capability.yaml", head+"tools:\n  - {name: x, path: tools/x, description: d}\n", 0o644)
	write("tools/real", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("real", filepath.Join(dir, "tools/x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(os.DirFS(dir))
	want := []string{
		`capability.yaml: tools[0].path: "tools/x" is a symlink, not a regular file`,
		`etc: symlinks are not allowed`,
		`tools/x: symlinks are not allowed`,
	}
	if got := problems(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

func TestLoadValidBundle(t *testing.T) {
	b := mustLoad(t, map[string]string{
		"capability.yaml": `schema_version: 1
name: kit
version: 2.0.0-rc.1+build.5
description: "  A kit.  "
agents:
  - agents/rev.md
skills:
  - skills/map
tools:
  - name: map
    path: tools/map
    description: Maps.
mcp: .mcp.json
mcp_servers:
  zeta:
    command: ./bin/zeta
    args: ["--dir", "${CAPABILITY_DIR}/data"]
    flag: zeta
  docs:
    url: https://docs.example.com/mcp
flags:
  zeta: {description: Zeta., default: true}
  beta: {description: Beta.}
workers:
  - name: idx
    run: sh "$CAPABILITY_DIR/idx.sh"
    flag: beta
    env: {LEVEL: info}
dependencies:
  setup:
    - {name: venv, run: "python3 -m venv .venv"}
  checks:
    - {name: git, run: command -v git, timeout_seconds: 5}
`,
		"agents/rev.md":          "---\nname: rev\ndescription: Reviews.\nmodel: opus\ntools: Read, Grep ,Bash\nskills: [map]\ncolor: red\n---\nYou review.\n",
		"skills/map/SKILL.md":    "---\nname: map\ndescription: |\n  Maps\n  repos.\nallowed-tools: Bash\n---\n",
		"skills/map/ref/more.md": "more",
		"tools/map":              "#!/bin/sh\n", // not executable in the source: a tool is made 0755
		"bin/zeta":               "#!/bin/sh\n",
		"data/x":                 "",
		"idx.sh*":                "#!/bin/sh\n",
		".mcp.json":              `{"mcpServers": {"alpha": {"command": "node", "args": ["a.js"], "env": {"A": "1"}}, "web": {"type": "http", "url": "http://localhost:9/mcp"}}}`,
	})
	want := &Bundle{
		Name:        "kit",
		Version:     "2.0.0-rc.1+build.5",
		Description: "A kit.",
		Agents:      []Agent{{Name: "rev", Description: "Reviews.", Model: "opus", Tools: []string{"Read", "Grep", "Bash"}, Skills: []string{"map"}, Path: "agents/rev.md"}},
		Skills:      []Skill{{Name: "map", Description: "Maps\nrepos.", Dir: "skills/map"}},
		Tools:       []Tool{{Name: "map", Description: "Maps.", Path: "tools/map"}},
		MCPServers: []MCPServer{
			{Name: "alpha", Type: MCPStdio, Command: "node", Args: []string{"a.js"}, Env: map[string]string{"A": "1"}},
			{Name: "docs", Type: MCPHTTP, URL: "https://docs.example.com/mcp"},
			{Name: "web", Type: MCPHTTP, URL: "http://localhost:9/mcp"},
			{Name: "zeta", Type: MCPStdio, Command: "./bin/zeta", Args: []string{"--dir", "${CAPABILITY_DIR}/data"}, Flag: "zeta"},
		},
		Workers: []Worker{{Name: "idx", Run: `sh "$CAPABILITY_DIR/idx.sh"`, Flag: "beta", Env: map[string]string{"LEVEL": "info"}}},
		Setup:   []Script{{Name: "venv", Run: "python3 -m venv .venv", Timeout: 300 * time.Second}},
		Checks:  []Script{{Name: "git", Run: "command -v git", Timeout: 5 * time.Second}},
		Flags:   []Flag{{Name: "beta", Description: "Beta."}, {Name: "zeta", Description: "Zeta.", Default: true}},
	}
	files, digest := b.Files, b.Digest
	b.Files, b.Digest = nil, ""
	if !reflect.DeepEqual(b, want) {
		t.Errorf("bundle:\n got %+v\nwant %+v", b, want)
	}
	var modes []string
	for _, f := range files {
		modes = append(modes, f.Mode.String()+" "+f.Path)
	}
	wantModes := []string{
		"-rw-r--r-- .mcp.json",
		"-rw-r--r-- agents/rev.md",
		"-rwxr-xr-x bin/zeta", // an MCP command in the bundle
		"-rw-r--r-- capability.yaml",
		"-rw-r--r-- data/x",
		"-rwxr-xr-x idx.sh", // executable in the source
		"-rw-r--r-- skills/map/SKILL.md",
		"-rw-r--r-- skills/map/ref/more.md",
		"-rwxr-xr-x tools/map",
	}
	if !reflect.DeepEqual(modes, wantModes) {
		t.Errorf("files:\n got %q\nwant %q", modes, wantModes)
	}
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		t.Errorf("digest %q", digest)
	}
}

func TestCompareVersions(t *testing.T) {
	// Each is before the next (semver.org, item 11), except where equal.
	ordered := []string{"0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if got := CompareVersions("1.0.0+a", "1.0.0+b"); got != 0 {
		t.Errorf("build metadata counts: %d", got)
	}
	if got := CompareVersions("junk", "0.0.1"); got != -1 {
		t.Errorf("an invalid version sorts first: %d", got)
	}
}

func TestValidNameAndVersion(t *testing.T) {
	for s, want := range map[string]bool{
		"repo-tools": true, "a": true, "0x": true, strings.Repeat("a", 63): true,
		"": false, "-a": false, "Repo": false, "a_b": false, "a.b": false, strings.Repeat("a", 64): false,
		"bin": false, "codex": false, "gemini": false, "bins": true,
	} {
		if got := ValidName(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{
		"1.2.3": true, "1.2.3-rc.1": true, "1.2.3+x.y": true, "1.2.3-0.a+b": true,
		"1.2": false, "v1.2.3": false, "01.2.3": false, "1.2.3-01": false, "1.2.3-": false,
	} {
		if got := ValidVersion(s); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", s, got, want)
		}
	}
}
