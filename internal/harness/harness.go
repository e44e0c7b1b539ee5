// Package harness is the registry of the agent CLIs paddock runs inside a
// sandbox for prompt and task operations: how each one is invoked
// non-interactively, which secret it needs, and how its streamed output is
// parsed into the common session event schema (Event).
//
// Vocabulary:
//
//   - A Harness is one agent CLI (Claude Code, Codex, OpenCode, Gemini CLI,
//     Kimi Code) as paddock drives it.
//   - An Invocation is one turn: a prompt, optionally continuing the CLI's
//     own conversation (ResumeID, the harness session id of an earlier turn).
//   - Command turns an Invocation into an argv and the environment it needs.
//     The caller runs it in Invocation.Workdir with stdin empty (several CLIs
//     read a piped stdin as extra prompt text, and Codex waits for it), and
//     lays the runtime's own environment and secrets over the returned env,
//     which holds only defaults and paddock's wiring.
//   - A Parser reads the CLI's stdout line by line and emits common events;
//     Finish adds the error and done events once the process has exited.
//
// Each CLI's format facts come from its upstream sources or documentation;
// the file for each harness says where, and marks what could not be
// confirmed. The stand-in executables in ./standin mimic the same facts so
// that tests can drive Command's argv end to end without a model.
package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/capability"
)

// Default is the harness used when neither the request nor the session names
// one.
const Default = "claude-code"

// Harness is one agent CLI paddock can run in a sandbox.
type Harness struct {
	Name   string // claude-code, codex, opencode, gemini, kimi
	Binary string // claude, codex, opencode, gemini, kimi
	// Secrets are the environment variables holding model credentials; any
	// one of them is enough.
	Secrets []string
	// Unread are variables one would expect the CLI to take its model
	// credential from that the pinned CLI does not read, checked by running
	// it: a runtime that has only one of them is told so.
	Unread []string
	// Endpoints are where the CLI calls its model, one per credential
	// variable. A turn in a proxy sandbox whose egress proxy refuses the
	// endpoint the turn uses ends as model_unreachable (see Endpoint).
	Endpoints []Endpoint
	// WrittenAgainst is the CLI version the invocation and parser follow.
	WrittenAgainst string
	// Package is the npm package the CLI is distributed as.
	Package     string
	Description string

	command   func(inv Invocation) (argv []string, env map[string]string)
	newParser func(h *Harness) Parser
}

// Invocation is one turn of a harness.
type Invocation struct {
	Prompt string
	// ResumeID continues the CLI's own conversation: the HarnessSessionID a
	// Parser reported for an earlier turn. Empty starts a new one.
	ResumeID string
	// Model is passed to the CLI as it names models; empty: its default.
	Model string
	// Workdir is the directory the CLI runs in (/workspace). The caller
	// starts the process there; CLIs that take a directory flag get it too
	// (Kimi Code has none: its session belongs to the process's directory).
	Workdir string
	// CapRoot is where the runtime's capabilities are materialized
	// (/workspace/.paddock/capabilities). It holds mcp.json,
	// codex/config.toml, opencode.json and gemini/settings.json when the
	// runtime has MCP servers; HasMCP says whether they are there.
	CapRoot string
	HasMCP  bool
	// MCPServers are the resolved MCP servers. Codex takes them as -c
	// overrides (see codex.go); Claude Code, OpenCode and Gemini CLI read
	// the files under CapRoot. Kimi Code reads only ~/.kimi-code/mcp.json
	// (see kimi.go), so Command cannot point it at CapRoot.
	MCPServers []capability.ResolvedMCPServer
}

// Parser turns one harness's stdout into common session events. Seq, Turn
// and Time are left for the caller to fill in. A usage event counts every
// prompt token in InputTokens, cached or not, and the cached part again in
// CacheReadTokens, whichever way the CLI splits them.
type Parser interface {
	// Feed takes one stdout line (without its newline). Lines that are not
	// the CLI's JSON are kept as possible error text, never an error here.
	Feed(line []byte) []Event
	// Finish takes the exit code and the tail of stderr. It emits an error
	// event if the process failed and no error was reported yet, then the
	// done event with the harness session id and the last assistant text.
	Finish(exitCode int, stderrTail string) []Event
	// HarnessSessionID is the CLI's conversation id, once it is known.
	HarnessSessionID() string
}

// Error codes the parsers put in TurnError.Code when the CLI gives
// none of its own, or when an error is recognized as one of these kinds.
const (
	// CodeUnauthenticated: the CLI had no usable model credentials.
	CodeUnauthenticated = "harness_unauthenticated"
	// CodeSessionNotFound: the conversation to resume does not exist.
	CodeSessionNotFound = "harness_session_not_found"
	// CodeFailed: any other failure.
	CodeFailed = "harness_failed"
)

var all = []*Harness{claudeCode, codex, openCode, gemini, kimi}

// All returns every harness, in a stable order (the default first).
func All() []*Harness { return slices.Clone(all) }

// Lookup finds a harness by name.
func Lookup(name string) (*Harness, bool) {
	for _, h := range all {
		if h.Name == name {
			return h, true
		}
	}
	return nil, false
}

// Command returns the argv and environment of one non-interactive turn:
// streaming JSON on stdout, tools approved without asking (the sandbox is
// the boundary), MCP servers wired in as the CLI documents, and the CLI's
// own resume flag when inv.ResumeID is set.
func (h *Harness) Command(inv Invocation) (argv []string, env map[string]string) {
	return h.command(inv)
}

// NewParser returns a parser for one turn of h.
func (h *Harness) NewParser() Parser { return h.newParser(h) }

// Endpoint is where a harness's CLI calls its model with one credential,
// by default.
type Endpoint struct {
	Secret string // the credential variable
	Host   string
	Port   int // 0: 443
	// Provider is the prefix of a model name that selects this endpoint
	// (OpenCode's anthropic/claude-…); "" for a CLI of one provider.
	Provider string
	// BaseURLs are the variables that send the CLI elsewhere.
	BaseURLs []string
}

// Endpoint returns where a turn of h with model calls its model, given the
// variables the sandbox's secrets set: the endpoint of the credential the
// CLI uses. It returns false when that cannot be told (no credential; a
// base-URL variable sends the CLI elsewhere; several credentials and no
// model that picks one), so that nothing is watched by mistake.
func (h *Harness) Endpoint(model string, envs []string) (Endpoint, bool) {
	var held []Endpoint
	for _, e := range h.Endpoints {
		if slices.Contains(envs, e.Secret) {
			held = append(held, e)
		}
	}
	byProvider := slices.ContainsFunc(h.Endpoints, func(e Endpoint) bool { return e.Provider != "" })
	if provider, _, ok := strings.Cut(model, "/"); ok && byProvider {
		held = slices.DeleteFunc(held, func(e Endpoint) bool { return e.Provider != provider })
	}
	if len(held) == 0 {
		return Endpoint{}, false
	}
	e := held[0]
	for _, o := range held[1:] {
		if o.Host != e.Host || o.Port != e.Port {
			return Endpoint{}, false
		}
	}
	for _, o := range held {
		for _, v := range o.BaseURLs {
			if slices.Contains(envs, v) {
				return Endpoint{}, false
			}
		}
	}
	if e.Port == 0 {
		e.Port = 443
	}
	return e, true
}

// secretHint names the variables h takes credentials from, for error text.
func (h *Harness) secretHint() string {
	return fmt.Sprintf("%s needs one of %s", h.Binary, strings.Join(h.Secrets, ", "))
}
