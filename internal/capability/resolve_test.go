package capability

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/shim"
)

// alpha and beta ship agents, skills, tools, MCP servers and workers with
// names in common.
func alpha(t *testing.T, version string) *Bundle {
	return mustLoad(t, map[string]string{
		"capability.yaml": `schema_version: 1
name: alpha
version: ` + version + `
description: Alpha.
agents: [agents/rev.md]
skills: [skills/map]
tools:
  - {name: map, path: tools/map, description: Maps.}
mcp_servers:
  memory:
    command: ./bin/mem
    args: ["--data", "${CAPABILITY_DIR}/data"]
    env: {DB: "${CAPABILITY_DIR}/db.json", Q: "say \"hi\" \\ then\nnewline"}
    flag: mem
  my.docs:
    url: https://docs.example.com/mcp
flags:
  mem: {description: Memory., default: true}
  idx.fast: {description: Indexer.}
workers:
  - {name: idx, run: ./idx, flag: idx.fast}
  - name: sync
    run: sync
    env: {TARGET: "${CAPABILITY_DIR}/out", MODE: fast}
dependencies:
  setup:
    - {name: prepare, run: "mkdir -p data"}
  checks:
    - {name: sh, run: "command -v sh"}
`,
		"agents/rev.md":       "---\nname: rev\ndescription: Alpha reviews.\n---\nAlpha.\n",
		"skills/map/SKILL.md": "---\nname: map\ndescription: Alpha maps.\n---\nAlpha.\n",
		"skills/map/ref.md":   "alpha ref",
		"tools/map":           "#!/bin/sh\necho alpha\n",
		"bin/mem":             "#!/bin/sh\n",
		"data/.keep":          "",
	})
}

func beta(t *testing.T) *Bundle {
	return mustLoad(t, map[string]string{
		"capability.yaml": `schema_version: 1
name: beta
version: 0.1.0
description: Beta.
agents: [agents/rev.md, agents/other.md]
skills: [skills/map]
tools:
  - {name: map, path: tools/map, description: Beta maps.}
  - {name: bt, path: tools/bt, description: Beta tool.}
mcp_servers:
  memory: {command: beta-mem}
workers:
  - {name: sync, run: beta-sync}
dependencies:
  setup:
    - {name: prepare, run: "true"}
`,
		"agents/rev.md":       "---\nname: rev\ndescription: Beta reviews.\n---\nBeta.\n",
		"agents/other.md":     "---\nname: other\ndescription: Other.\n---\nOther.\n",
		"skills/map/SKILL.md": "---\nname: map\ndescription: Beta maps.\n---\nBeta.\n",
		"tools/map":           "#!/bin/sh\necho beta\n",
		"tools/bt":            "#!/bin/sh\n",
	})
}

// names lists "capability/name" of items, servers or workers.
func itemNames(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Capability+"/"+it.Name)
	}
	return out
}

func serverNames(servers []ResolvedMCPServer) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.Capability+"/"+s.Name)
	}
	return out
}

func workerNames(workers []ResolvedWorker) []string {
	var out []string
	for _, w := range workers {
		out = append(out, w.Capability+"/"+w.Name)
	}
	return out
}

func TestResolveConflictsAndOrder(t *testing.T) {
	a, b := alpha(t, "1.0.0"), beta(t)
	tests := []struct {
		name                       string
		bindings                   []Binding
		agents, skills, tools      []string
		servers, workers, resolved []string
		conflicts                  []Conflict
	}{
		{
			name:     "alpha installed first keeps every shared name",
			bindings: []Binding{{ID: "b1", Bundle: a}, {ID: "b2", Bundle: b}},
			agents:   []string{"alpha/rev", "beta/other"},
			skills:   []string{"alpha/map"},
			tools:    []string{"alpha/map", "beta/bt"},
			servers:  []string{"alpha/memory", "alpha/my.docs"},
			workers:  []string{"alpha/sync"}, // idx is off by default
			resolved: []string{"alpha", "beta"},
			conflicts: []Conflict{
				{Kind: KindAgent, Name: "rev", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindSkill, Name: "map", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindTool, Name: "map", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindMCPServer, Name: "memory", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindWorker, Name: "sync", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
			},
		},
		{
			name:     "beta installed first keeps them",
			bindings: []Binding{{ID: "b2", Bundle: b}, {ID: "b1", Bundle: a}},
			agents:   []string{"beta/rev", "beta/other"},
			skills:   []string{"beta/map"},
			tools:    []string{"beta/map", "beta/bt"},
			servers:  []string{"beta/memory", "alpha/my.docs"},
			workers:  []string{"beta/sync"},
			resolved: []string{"beta", "alpha"},
			conflicts: []Conflict{
				{Kind: KindAgent, Name: "rev", Capabilities: []string{"beta", "alpha"}, BindingIDs: []string{"b2", "b1"}},
				{Kind: KindSkill, Name: "map", Capabilities: []string{"beta", "alpha"}, BindingIDs: []string{"b2", "b1"}},
				{Kind: KindTool, Name: "map", Capabilities: []string{"beta", "alpha"}, BindingIDs: []string{"b2", "b1"}},
				{Kind: KindMCPServer, Name: "memory", Capabilities: []string{"beta", "alpha"}, BindingIDs: []string{"b2", "b1"}},
				{Kind: KindWorker, Name: "sync", Capabilities: []string{"beta", "alpha"}, BindingIDs: []string{"b2", "b1"}},
			},
		},
		{
			name: "a server gated off does not claim its name",
			bindings: []Binding{
				{ID: "b1", Bundle: a, Flags: map[string]bool{"mem": false, "idx.fast": true}},
				{ID: "b2", Bundle: b},
			},
			agents:   []string{"alpha/rev", "beta/other"},
			skills:   []string{"alpha/map"},
			tools:    []string{"alpha/map", "beta/bt"},
			servers:  []string{"alpha/my.docs", "beta/memory"},
			workers:  []string{"alpha/idx", "alpha/sync"},
			resolved: []string{"alpha", "beta"},
			conflicts: []Conflict{
				{Kind: KindAgent, Name: "rev", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindSkill, Name: "map", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindTool, Name: "map", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
				{Kind: KindWorker, Name: "sync", Capabilities: []string{"alpha", "beta"}, BindingIDs: []string{"b1", "b2"}},
			},
		},
		{
			name:     "the same capability bound twice keeps its first binding",
			bindings: []Binding{{ID: "new", Bundle: alpha(t, "1.1.0")}, {ID: "old", Bundle: a}},
			agents:   []string{"alpha/rev"},
			skills:   []string{"alpha/map"},
			tools:    []string{"alpha/map"},
			servers:  []string{"alpha/memory", "alpha/my.docs"},
			workers:  []string{"alpha/sync"},
			resolved: []string{"alpha"},
			conflicts: []Conflict{
				{Kind: KindCapability, Name: "alpha", Capabilities: []string{"alpha", "alpha"}, BindingIDs: []string{"new", "old"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Resolve(tt.bindings)
			var bindings []string
			for _, bd := range r.Bindings {
				bindings = append(bindings, bd.Bundle.Name)
			}
			for what, pair := range map[string][2][]string{
				"agents":   {itemNames(r.Agents), tt.agents},
				"skills":   {itemNames(r.Skills), tt.skills},
				"tools":    {itemNames(r.Tools), tt.tools},
				"servers":  {serverNames(r.MCPServers), tt.servers},
				"workers":  {workerNames(r.Workers), tt.workers},
				"bindings": {bindings, tt.resolved},
			} {
				if !reflect.DeepEqual(pair[0], pair[1]) {
					t.Errorf("%s %q, want %q", what, pair[0], pair[1])
				}
			}
			if !reflect.DeepEqual(r.Conflicts, tt.conflicts) {
				t.Errorf("conflicts:\n got %+v\nwant %+v", r.Conflicts, tt.conflicts)
			}
		})
	}
}

func TestResolveDetails(t *testing.T) {
	a := alpha(t, "1.0.0")
	r := Resolve([]Binding{{ID: "b1", Bundle: a, Flags: map[string]bool{"idx.fast": true, "unknown": true}}})
	dir := "/workspace/.paddock/capabilities/alpha"

	if got, want := r.Bindings[0].Flags, map[string]bool{"mem": true, "idx.fast": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("binding flags %v, want %v", got, want)
	}
	wantItems := map[string][]Item{
		"agents": {{Name: "rev", Description: "Alpha reviews.", Capability: "alpha", BindingID: "b1", Path: "/workspace/.claude/agents/rev.md", Source: "agents/rev.md"}},
		"skills": {{Name: "map", Description: "Alpha maps.", Capability: "alpha", BindingID: "b1", Path: "/workspace/.claude/skills/map", Source: "skills/map"}},
		"tools":  {{Name: "map", Description: "Maps.", Capability: "alpha", BindingID: "b1", Path: dir[:len(dir)-len("/alpha")] + "/bin/map", Source: "tools/map"}},
	}
	for what, got := range map[string][]Item{"agents": r.Agents, "skills": r.Skills, "tools": r.Tools} {
		if !reflect.DeepEqual(got, wantItems[what]) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, wantItems[what])
		}
	}

	wantServers := []ResolvedMCPServer{
		{MCPServer: MCPServer{
			Name: "memory", Type: MCPStdio, Command: dir + "/bin/mem", Args: []string{"--data", dir + "/data"},
			Env: map[string]string{"DB": dir + "/db.json", "Q": "say \"hi\" \\ then\nnewline"}, Flag: "mem",
		}, Capability: "alpha", BindingID: "b1"},
		{MCPServer: MCPServer{Name: "my.docs", Type: MCPHTTP, URL: "https://docs.example.com/mcp"}, Capability: "alpha", BindingID: "b1"},
	}
	if !reflect.DeepEqual(r.MCPServers, wantServers) {
		t.Errorf("servers:\n got %+v\nwant %+v", r.MCPServers, wantServers)
	}
	// The bundle itself is untouched.
	if a.MCPServers[0].Command != "./bin/mem" || a.MCPServers[0].Env["DB"] != "${CAPABILITY_DIR}/db.json" {
		t.Errorf("Resolve changed the bundle: %+v", a.MCPServers[0])
	}

	base := map[string]string{
		"CAPABILITY_DIR": dir, "CAPABILITY_NAME": "alpha", "CAPABILITY_VERSION": "1.0.0",
		"CAPABILITY_FLAG_MEM": "true", "CAPABILITY_FLAG_IDX_FAST": "true",
	}
	syncEnv := map[string]string{"TARGET": dir + "/out", "MODE": "fast"}
	for k, v := range base {
		syncEnv[k] = v
	}
	wantWorkers := []ResolvedWorker{
		{Worker: a.Workers[0], Capability: "alpha", BindingID: "b1", Dir: dir, Env: base},
		{Worker: a.Workers[1], Capability: "alpha", BindingID: "b1", Dir: dir, Env: syncEnv},
	}
	if !reflect.DeepEqual(r.Workers, wantWorkers) {
		t.Errorf("workers:\n got %+v\nwant %+v", r.Workers, wantWorkers)
	}
	wantSetup := []ResolvedScript{{Script: Script{Name: "prepare", Run: "mkdir -p data", Timeout: 300 * time.Second}, Capability: "alpha", BindingID: "b1", Dir: dir, Env: base}}
	wantChecks := []ResolvedScript{{Script: Script{Name: "sh", Run: "command -v sh", Timeout: 30 * time.Second}, Capability: "alpha", BindingID: "b1", Dir: dir, Env: base}}
	if !reflect.DeepEqual(r.Setup, wantSetup) || !reflect.DeepEqual(r.Checks, wantChecks) {
		t.Errorf("scripts:\n got %+v %+v\nwant %+v %+v", r.Setup, r.Checks, wantSetup, wantChecks)
	}
}

func TestFlagValues(t *testing.T) {
	a := alpha(t, "1.0.0")
	got, err := a.FlagValues(nil)
	if err != nil || !reflect.DeepEqual(got, map[string]bool{"mem": true, "idx.fast": false}) {
		t.Errorf("defaults: %v, %v", got, err)
	}
	got, err = a.FlagValues(map[string]bool{"mem": false})
	if err != nil || !reflect.DeepEqual(got, map[string]bool{"mem": false, "idx.fast": false}) {
		t.Errorf("override: %v, %v", got, err)
	}
	_, err = a.FlagValues(map[string]bool{"mem": false, "nope": true, "also": false})
	if !errors.Is(err, ErrUnknownFlag) {
		t.Fatalf("unknown flag: %v", err)
	}
	if want := `unknown flag "also", "nope": capability alpha 1.0.0 has no such flag`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("the error does not name the flag: %v", err)
	}
}

// TestBinDirIsTheAgentsToolsDir: the agent puts BinDir on every process's
// PATH under its own name for it (it imports nothing of the control plane).
func TestBinDirIsTheAgentsToolsDir(t *testing.T) {
	if BinDir != shim.ToolsDir {
		t.Fatalf("capability.BinDir %q, the agent's shim.ToolsDir %q", BinDir, shim.ToolsDir)
	}
}
