package capability

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Files Materialize writes beside the bundles under Root.
const (
	// ClaudeMCPConfig is for Claude Code's --mcp-config.
	ClaudeMCPConfig = Root + "/mcp.json"
	// KimiMCPConfig is Kimi Code's own MCP file (~/.kimi-code/mcp.json,
	// the same format): Kimi Code 2.1 reads servers from no other file, so
	// it is written there, a Managed path.
	KimiMCPConfig = Home + "/.kimi-code/mcp.json"
	// CodexHome holds a Codex config.toml with the MCP servers, for
	// reference: the Codex harness passes them as -c mcp_servers=… so that
	// CODEX_HOME (its login and sessions) stays the user's.
	CodexHome   = Root + "/codex"
	CodexConfig = CodexHome + "/config.toml"
	// OpenCodeConfig is for OpenCode's OPENCODE_CONFIG.
	OpenCodeConfig = Root + "/opencode.json"
	// GeminiSettings is a Gemini CLI settings.json holding the MCP servers.
	GeminiSettings = Root + "/gemini/settings.json"
	// ResolvedFile describes the resolved set, for an agent to read.
	ResolvedFile = Root + "/resolved.json"
)

// PlanFile is a file to write in the sandbox.
type PlanFile struct {
	Path string // absolute
	Mode fs.FileMode
	Data []byte
}

// Plan is everything a resolved set puts in a sandbox.
type Plan struct {
	Files []PlanFile // sorted by path
	// Managed are the files written outside Root, sorted: the next
	// materialization removes those it no longer writes. Root itself is
	// paddock's, and can be replaced whole.
	Managed []string
}

// Materialize lays a resolved set out as files, in the layout the package
// documentation describes. It writes the MCP configurations even when
// there are no servers, so that they replace older ones.
func Materialize(r Resolved) Plan {
	var p Plan
	add := func(at string, mode fs.FileMode, data []byte, managed bool) {
		p.Files = append(p.Files, PlanFile{Path: at, Mode: mode, Data: data})
		if managed {
			p.Managed = append(p.Managed, at)
		}
	}
	bundles := map[string]*Bundle{}
	for _, bd := range r.Bindings {
		bundles[bd.Bundle.Name] = bd.Bundle
		for _, f := range bd.Bundle.Files {
			add(path.Join(Dir(bd.Bundle.Name), f.Path), f.Mode, f.Data, false)
		}
	}
	for _, t := range r.Tools {
		if f, ok := bundles[t.Capability].file(t.Source); ok {
			add(t.Path, 0o755, f.Data, false)
		}
	}
	for _, a := range r.Agents {
		if f, ok := bundles[a.Capability].file(a.Source); ok {
			add(a.Path, 0o644, f.Data, true)
		}
	}
	for _, s := range r.Skills {
		for _, f := range bundles[s.Capability].filesUnder(s.Source) {
			add(path.Join(s.Path, f.Path), f.Mode, f.Data, true)
		}
	}
	add(ClaudeMCPConfig, 0o644, claudeMCPConfig(r.MCPServers), false)
	if len(r.MCPServers) > 0 {
		// A user's own file is replaced only while there are servers.
		add(KimiMCPConfig, 0o644, claudeMCPConfig(r.MCPServers), true)
	}
	add(CodexConfig, 0o644, codexConfig(r.MCPServers), false)
	add(OpenCodeConfig, 0o644, openCodeConfig(r.MCPServers), false)
	add(GeminiSettings, 0o644, geminiSettings(r.MCPServers), false)
	add(ResolvedFile, 0o644, resolvedJSON(r), false)
	slices.SortFunc(p.Files, func(a, b PlanFile) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(p.Managed)
	return p
}

// marshalJSON writes v indented, with HTML characters as they are, and a
// final newline. encoding/json sorts map keys, and struct fields keep
// their order, so the output is deterministic.
func marshalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic("capability: " + err.Error()) // only strings, slices and maps
	}
	return buf.Bytes()
}

// resolvedJSON is the resolved set as an agent in the sandbox reads it.
func resolvedJSON(r Resolved) []byte {
	type binding struct {
		ID         string          `json:"id,omitempty"`
		Capability string          `json:"capability"`
		Version    string          `json:"version"`
		Dir        string          `json:"dir"`
		Flags      map[string]bool `json:"flags"`
	}
	type item struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Capability  string `json:"capability"`
		Path        string `json:"path,omitempty"`
	}
	type conflict struct {
		Kind         string   `json:"kind"`
		Name         string   `json:"name"`
		Capabilities []string `json:"capabilities"`
	}
	out := struct {
		Root       string            `json:"root"`
		Bin        string            `json:"bin"`
		MCPConfigs map[string]string `json:"mcp_configs"`
		Bindings   []binding         `json:"bindings"`
		Agents     []item            `json:"agents"`
		Skills     []item            `json:"skills"`
		Tools      []item            `json:"tools"`
		MCPServers []item            `json:"mcp_servers"`
		Workers    []item            `json:"workers"`
		Setup      []item            `json:"setup"`
		Checks     []item            `json:"checks"`
		Conflicts  []conflict        `json:"conflicts"`
	}{
		Root: Root,
		Bin:  BinDir,
		MCPConfigs: map[string]string{
			"claude-code": ClaudeMCPConfig,
			"kimi":        KimiMCPConfig,
			"codex":       CodexConfig,
			"opencode":    OpenCodeConfig,
			"gemini":      GeminiSettings,
		},
		Bindings: []binding{}, Agents: []item{}, Skills: []item{}, Tools: []item{},
		MCPServers: []item{}, Workers: []item{}, Setup: []item{}, Checks: []item{}, Conflicts: []conflict{},
	}
	for _, bd := range r.Bindings {
		out.Bindings = append(out.Bindings, binding{ID: bd.ID, Capability: bd.Bundle.Name, Version: bd.Bundle.Version, Dir: Dir(bd.Bundle.Name), Flags: bd.Flags})
	}
	items := func(in []Item) []item {
		out := make([]item, 0, len(in))
		for _, it := range in {
			out = append(out, item{Name: it.Name, Description: it.Description, Capability: it.Capability, Path: it.Path})
		}
		return out
	}
	out.Agents, out.Skills, out.Tools = items(r.Agents), items(r.Skills), items(r.Tools)
	for _, s := range r.MCPServers {
		out.MCPServers = append(out.MCPServers, item{Name: s.Name, Capability: s.Capability})
	}
	for _, w := range r.Workers {
		out.Workers = append(out.Workers, item{Name: w.Name, Capability: w.Capability})
	}
	for _, s := range r.Setup {
		out.Setup = append(out.Setup, item{Name: s.Name, Capability: s.Capability})
	}
	for _, s := range r.Checks {
		out.Checks = append(out.Checks, item{Name: s.Name, Capability: s.Capability})
	}
	for _, c := range r.Conflicts {
		out.Conflicts = append(out.Conflicts, conflict{Kind: c.Kind, Name: c.Name, Capabilities: c.Capabilities})
	}
	return marshalJSON(out)
}
