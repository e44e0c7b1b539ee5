package capability

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Where things go in a sandbox. HOME and the working directory there are
// Home.
const (
	Home = "/workspace"
	// Root holds one directory per bound capability, the tools' bin
	// directory and the harness MCP configurations.
	Root = Home + "/.paddock/capabilities"
	// BinDir holds a copy of every resolved tool; it goes on PATH.
	BinDir = Root + "/bin"
	// AgentsDir and SkillsDir are where Claude Code reads user agents and
	// skills (~/.claude/agents/<name>.md, ~/.claude/skills/<name>/SKILL.md).
	AgentsDir = Home + "/.claude/agents"
	SkillsDir = Home + "/.claude/skills"
)

// Dir is the directory a capability's files are materialized in.
func Dir(capability string) string {
	return path.Join(Root, capability)
}

// ErrUnknownFlag is wrapped by FlagValues' error for an override naming a
// flag the bundle does not declare.
var ErrUnknownFlag = errors.New("unknown flag")

// FlagValues returns every flag's value: its default, replaced by the
// override when there is one. An override for a flag the bundle does not
// declare is an error (wrapping ErrUnknownFlag) naming it.
func (b *Bundle) FlagValues(overrides map[string]bool) (map[string]bool, error) {
	values := make(map[string]bool, len(b.Flags))
	for _, f := range b.Flags {
		values[f.Name] = f.Default
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if _, ok := values[name]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", name))
			continue
		}
		values[name] = overrides[name]
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w %s: capability %s %s has no such flag", ErrUnknownFlag, strings.Join(unknown, ", "), b.Name, b.Version)
	}
	return values, nil
}

// Binding is a capability bound to a runtime, as Resolve takes it.
type Binding struct {
	ID     string
	Bundle *Bundle
	// Flags are the binding's flag values (see FlagValues); a flag missing
	// here takes its default, and a name the bundle does not declare is
	// ignored.
	Flags map[string]bool
}

// Item is a resolved agent, skill or tool.
type Item struct {
	Name        string
	Description string
	Capability  string
	BindingID   string
	// Path is where it is in the sandbox: the agent's markdown file, the
	// skill's directory, the tool's copy in BinDir.
	Path string
	// Source is its path in the bundle.
	Source string
}

// ResolvedMCPServer is an MCP server of a resolved set, with
// ${CAPABILITY_DIR} replaced by its capability's directory in Command,
// Args and Env, and a Command starting with "./" made absolute in it.
type ResolvedMCPServer struct {
	MCPServer
	Capability string
	BindingID  string
}

// ResolvedWorker is a worker of a resolved set. Dir is its capability's
// directory, where it runs; Env is its whole environment beyond the
// sandbox's own: CAPABILITY_DIR, CAPABILITY_NAME, CAPABILITY_VERSION,
// CAPABILITY_FLAG_<NAME>=true|false for every flag of its capability, and
// the worker's env with ${CAPABILITY_DIR} replaced.
type ResolvedWorker struct {
	Worker
	Capability string
	BindingID  string
	Dir        string
	Env        map[string]string
}

// ResolvedScript is a setup script or check of a resolved set, with the
// same Dir and Env as a worker (less a worker's own env).
type ResolvedScript struct {
	Script
	Capability string
	BindingID  string
	Dir        string
	Env        map[string]string
}

// Conflict kinds.
const (
	KindCapability = "capability" // the same capability bound twice
	KindAgent      = "agent"
	KindSkill      = "skill"
	KindTool       = "tool"
	KindMCPServer  = "mcp_server"
	KindWorker     = "worker"
)

// Conflict is a name that more than one binding ships. The first binding
// (in install order) keeps it; the others' are left out.
type Conflict struct {
	Kind         string
	Name         string
	Capabilities []string // in install order; the first one won
	BindingIDs   []string // the same order
}

// Resolved is the merged set of a runtime's enabled bindings.
type Resolved struct {
	Bindings   []Binding // those resolved, Flags filled in
	Agents     []Item
	Skills     []Item
	Tools      []Item
	MCPServers []ResolvedMCPServer
	Workers    []ResolvedWorker
	Setup      []ResolvedScript // in install order, then each bundle's order
	Checks     []ResolvedScript
	Conflicts  []Conflict
}

// Resolve merges bindings, given in install order. MCP servers and
// workers whose flag is false are left out. When two bindings ship an
// agent, skill, tool, MCP server or worker of the same name, the first one
// keeps it and a Conflict records it; nothing is silently overwritten. A
// capability bound twice keeps its first binding only (its files share
// one directory), which is a Conflict of kind "capability".
func Resolve(bindings []Binding) Resolved {
	var r Resolved
	c := claims{owner: map[[2]string]int{}, conflict: map[[2]string]int{}, r: &r, bindings: bindings}
	for i, bd := range bindings {
		if bd.Bundle == nil || !c.claim(i, KindCapability, bd.Bundle.Name) {
			continue
		}
		b := bd.Bundle
		flags, _ := b.FlagValues(nil)
		for name := range flags {
			if v, ok := bd.Flags[name]; ok {
				flags[name] = v
			}
		}
		bd.Flags = flags
		r.Bindings = append(r.Bindings, bd)

		dir := Dir(b.Name)
		item := func(name, desc, at, src string) Item {
			return Item{Name: name, Description: desc, Capability: b.Name, BindingID: bd.ID, Path: at, Source: src}
		}
		for _, a := range b.Agents {
			if c.claim(i, KindAgent, a.Name) {
				r.Agents = append(r.Agents, item(a.Name, a.Description, path.Join(AgentsDir, a.Name+".md"), a.Path))
			}
		}
		for _, s := range b.Skills {
			if c.claim(i, KindSkill, s.Name) {
				r.Skills = append(r.Skills, item(s.Name, s.Description, path.Join(SkillsDir, s.Name), s.Dir))
			}
		}
		for _, t := range b.Tools {
			if c.claim(i, KindTool, t.Name) {
				r.Tools = append(r.Tools, item(t.Name, t.Description, path.Join(BinDir, t.Name), t.Path))
			}
		}
		for _, s := range b.MCPServers {
			if s.Flag != "" && !flags[s.Flag] || !c.claim(i, KindMCPServer, s.Name) {
				continue
			}
			r.MCPServers = append(r.MCPServers, ResolvedMCPServer{MCPServer: inDir(s, dir), Capability: b.Name, BindingID: bd.ID})
		}
		env := baseEnv(b, dir, flags)
		for _, w := range b.Workers {
			if w.Flag != "" && !flags[w.Flag] || !c.claim(i, KindWorker, w.Name) {
				continue
			}
			we := maps.Clone(env)
			for k, v := range w.Env {
				we[k] = strings.ReplaceAll(v, dirVar, dir)
			}
			r.Workers = append(r.Workers, ResolvedWorker{Worker: w, Capability: b.Name, BindingID: bd.ID, Dir: dir, Env: we})
		}
		for _, s := range b.Setup {
			r.Setup = append(r.Setup, ResolvedScript{Script: s, Capability: b.Name, BindingID: bd.ID, Dir: dir, Env: maps.Clone(env)})
		}
		for _, s := range b.Checks {
			r.Checks = append(r.Checks, ResolvedScript{Script: s, Capability: b.Name, BindingID: bd.ID, Dir: dir, Env: maps.Clone(env)})
		}
	}
	return r
}

// claims tracks which binding owns each name of each kind.
type claims struct {
	owner    map[[2]string]int // {kind, name}: index of the owning binding
	conflict map[[2]string]int // {kind, name}: index in r.Conflicts
	r        *Resolved
	bindings []Binding
}

// claim gives name to binding i unless an earlier binding has it, in which
// case the conflict is recorded and claim returns false.
func (c *claims) claim(i int, kind, name string) bool {
	k := [2]string{kind, name}
	first, taken := c.owner[k]
	if !taken {
		c.owner[k] = i
		return true
	}
	at, seen := c.conflict[k]
	if !seen {
		at = len(c.r.Conflicts)
		c.conflict[k] = at
		c.r.Conflicts = append(c.r.Conflicts, Conflict{
			Kind: kind, Name: name,
			Capabilities: []string{c.bindings[first].Bundle.Name},
			BindingIDs:   []string{c.bindings[first].ID},
		})
	}
	cf := &c.r.Conflicts[at]
	cf.Capabilities = append(cf.Capabilities, c.bindings[i].Bundle.Name)
	cf.BindingIDs = append(cf.BindingIDs, c.bindings[i].ID)
	return false
}

// inDir returns s as it runs from dir: ${CAPABILITY_DIR} replaced, and a
// command relative to the bundle ("./x") made absolute.
func inDir(s MCPServer, dir string) MCPServer {
	sub := func(v string) string { return strings.ReplaceAll(v, dirVar, dir) }
	if rest, ok := strings.CutPrefix(s.Command, "./"); ok {
		s.Command = path.Join(dir, rest)
	}
	s.Command = sub(s.Command)
	var args []string
	for _, a := range s.Args {
		args = append(args, sub(a))
	}
	s.Args = args
	var env map[string]string
	if len(s.Env) > 0 {
		env = make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			env[k] = sub(v)
		}
	}
	s.Env = env
	return s
}

// baseEnv is what every worker and script of a capability gets.
func baseEnv(b *Bundle, dir string, flags map[string]bool) map[string]string {
	env := map[string]string{EnvDir: dir, EnvName: b.Name, EnvVersion: b.Version}
	for name, v := range flags {
		env[FlagEnv(name)] = fmt.Sprint(v)
	}
	return env
}
