// Package capability reads, validates, resolves and materializes
// capability bundles: versioned sets of agent definitions, skills, tools,
// MCP server definitions, flags, workers, and setup and check scripts that
// a binding attaches to a runtime.
//
// A bundle is a directory with a capability.yaml manifest at its root.
// Load reads one from an fs.FS, ReadTar from a tar or tar.gz archive, and
// Catalog returns the built-in ones. Resolve merges a runtime's bindings
// into one set and Materialize lays that set out as the files of a
// sandbox. The package depends on nothing of the server.
//
// # Manifest reference (schema version 1)
//
// This is the reference for bundle authors. Every key is shown; the
// comments say which are required.
//
//	schema_version: 1            # required; 1 is the only version
//	name: repo-tools             # required; a capability name (below)
//	version: 1.2.0               # required; SemVer 2.0.0, pre-release and build metadata allowed
//	description: One line.       # required
//
//	agents:                      # agent definitions: markdown files (see Agents)
//	  - agents/code-reviewer.md
//	skills:                      # skill directories, each holding a SKILL.md (see Skills)
//	  - skills/repo-map
//	tools:                       # executables, put on PATH
//	  - name: repo-map           # required
//	    path: tools/repo-map     # required; a regular file of the bundle (installed 0755)
//	    description: One line.   # required
//
//	mcp: .mcp.json               # MCP servers in a JSON file, Claude Code's .mcp.json format
//	mcp_servers:                 # and/or inline, by server name
//	  memory:                    # a stdio server
//	    type: stdio              # optional: "stdio" (the default with command) or "http" (the default with url)
//	    command: python3         # required for stdio
//	    args: ["${CAPABILITY_DIR}/mcp/memory.py"]
//	    env: {MEMORY_FILE: /workspace/.paddock/memory.json}
//	    flag: memory             # optional: configured only while this flag is true
//	  docs:                      # an http (streamable HTTP) server
//	    url: https://mcp.example.com/mcp   # required for http; no command, args or env
//
//	flags:                       # booleans a binding sets, by flag name
//	  memory:
//	    description: One line.   # required
//	    default: true            # optional; false when absent
//
//	workers:                     # long-running processes, started when applied to a sandbox
//	  - name: indexer            # required
//	    run: sh "$CAPABILITY_DIR/workers/indexer.sh"   # required; run by /bin/sh -c
//	    flag: indexer            # optional: runs only while this flag is true
//	    env: {LEVEL: info}       # optional
//
//	dependencies:
//	  setup:                     # run in order, each to completion, when applied to a sandbox
//	    - name: venv             # required
//	      run: python3 -m venv "$CAPABILITY_DIR/.venv"   # required; run by /bin/sh -c
//	      timeout_seconds: 300   # optional; default 300, from 1 to 3600
//	  checks:                    # preflight checks: a non-zero exit is a failed check
//	    - name: git              # required
//	      run: command -v git    # required
//	      timeout_seconds: 30    # optional; default 30, from 1 to 3600
//
// Validation is strict, and reports every problem at once, each with its
// file and where in it ("capability.yaml: workers[1].run: required"):
//
//   - Unknown keys are problems everywhere in capability.yaml and in the
//     MCP JSON file. Values must have the types shown: strings must be
//     YAML strings (quote a value YAML would read as a number or boolean:
//     "1.0", "true"), lists lists, mappings mappings. One YAML document;
//     no anchors or aliases.
//   - A capability name is lower-case letters, digits and '-', starting
//     with a letter or digit, at most 63 characters, and not bin, codex or
//     gemini (Materialize uses those under Root).
//   - The names of agents, skills, tools, MCP servers, workers, setup
//     scripts, checks and flags are letters, digits, '.', '_' and '-',
//     starting with a letter or digit, at most 63 characters, and unique
//     within their kind. A server may not be in both mcp and mcp_servers.
//   - Paths are relative to the bundle root, use '/', never contain "..",
//     and must name a file of the bundle (agents, tools, mcp) or a
//     directory (skills). A tool must be a regular file.
//   - A flag named by an MCP server or worker must be declared. Two flags
//     may not share an environment variable (see Environment).
//   - env keys are environment variable names ([A-Za-z_][A-Za-z0-9_]*), and
//     a worker may not set CAPABILITY_DIR, CAPABILITY_NAME,
//     CAPABILITY_VERSION or CAPABILITY_FLAG_*.
//   - An MCP server's command written "./x" or "${CAPABILITY_DIR}/x", and
//     an argument written "${CAPABILITY_DIR}/x", must name something in the
//     bundle; such a command is installed 0755. http servers need an http
//     or https URL; "sse" is not supported.
//
// ${CAPABILITY_DIR} in an MCP server's command, args and env, and in a
// worker's env values, is replaced by the bundle's directory in the
// sandbox (Root/<name>). In run strings the shell expands it, from the
// environment.
//
// # MCP JSON file
//
// The file named by mcp has the format Claude Code uses for .mcp.json, so
// an existing one can ship unchanged:
//
//	{"mcpServers": {"memory": {"command": "python3", "args": ["..."], "env": {"K": "V"}},
//	                "docs":   {"type": "http", "url": "https://mcp.example.com/mcp"}}}
//
// Each server takes type, command, args, env and url, nothing else, with
// the rules above. Flags cannot be set there; use mcp_servers for a gated
// server.
//
// # Agents
//
// An agent definition is a markdown file (.md): YAML frontmatter between
// a first line "---" and the next line "---", then the system prompt.
//
//	---
//	name: code-reviewer          # required; a name, unique in the bundle
//	description: When to use it. # required
//	model: sonnet                # optional
//	tools: Read, Grep, Bash      # optional; a list or a comma-separated string
//	skills: [repo-map]           # optional; a list or a comma-separated string
//	---
//	You are a senior engineer reviewing...
//
// Other frontmatter keys are allowed and kept: the harnesses define more.
// The file is installed as-is as AgentsDir/<name>.md.
//
// # Skills
//
// A skill is a directory holding SKILL.md, whose frontmatter has name
// (required, equal to the directory's name) and description (required);
// other keys are allowed. The whole directory is installed as
// SkillsDir/<name>/.
//
// # Files
//
// Every regular file of the bundle ships, whether the manifest names it or
// not; symlinks, devices and other special files are problems. A bundle
// holds at most MaxFiles files and, unless the caller says otherwise,
// DefaultMaxBytes. Modes are normalized: 0755 for files with an execute
// bit, tools and MCP commands in the bundle, 0644 for the rest. Tar writes
// the canonical archive and Digest identifies it.
//
// # Environment
//
// Workers, setup scripts and checks run by /bin/sh -c in the bundle's
// directory with, besides the sandbox's environment and a worker's env:
//
//	CAPABILITY_DIR=/workspace/.paddock/capabilities/<name>
//	CAPABILITY_NAME=<name>
//	CAPABILITY_VERSION=<version>
//	CAPABILITY_FLAG_<FLAG>=true|false   for every flag; the name upper-cased, '.' and '-' as '_'
//
// # Layout in a sandbox
//
// HOME and the working directory in a sandbox are /workspace. Materialize
// writes:
//
//	/workspace/.paddock/capabilities/          Root
//	  <capability>/...                         every file of each bundle
//	  bin/<tool>                               every resolved tool (0755): put it on PATH
//	  mcp.json                                 Claude Code --mcp-config
//	  codex/config.toml                        Codex config.toml (for reference: the harness passes -c mcp_servers=…)
//	  opencode.json                            OpenCode, with OPENCODE_CONFIG
//	  gemini/settings.json                     Gemini CLI settings (mcpServers)
//	  resolved.json                            the resolved set, for an agent to read
//	/workspace/.claude/agents/<agent>.md       every resolved agent
//	/workspace/.claude/skills/<skill>/...      every resolved skill
//	/workspace/.kimi-code/mcp.json             Kimi Code's MCP servers (it reads no other file)
//
// The files under /workspace/.claude and /workspace/.kimi-code are the
// Plan's Managed paths: they share a directory with the user's own, so the
// next materialization removes only the ones it wrote before and no longer
// writes.
package capability
