// Package mcp is paddock's Model Context Protocol server: one set of
// tools, written once over the public Go SDK (pkg/client), served over
// stdio by `paddock mcp` and over Streamable HTTP at the server's /mcp
// (internal/api/mcp.go). Every tool is an API call made with the
// credential of whoever connected, so the API's authentication, access
// checks and rate limits decide what a tool may do, exactly as they do
// for any other client; nothing here decides access.
//
// A user's mistake (an unknown runtime, a role too low, a bad argument,
// a runtime that is not running) comes back as a tool error (isError)
// whose text is the API's code and message ("runtime_not_found: …"),
// never as a protocol failure.
//
// The package imports nothing of paddock's server: only pkg/client and
// the MCP SDK (a test holds it to that).
package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// Name is the name the server gives in initialize.
const Name = "paddock"

// Options configure a server's tools.
type Options struct {
	// Org and Workspace are what the tools' org and workspace arguments
	// default to; without them each call must name its own.
	Org, Workspace string
	// Version is the server's version, given in initialize.
	Version string
	// Schemas caches the tools' schemas between servers: the HTTP
	// transport makes one server per request. nil: none.
	Schemas *sdk.SchemaCache
}

// NewServer returns an MCP server whose tools call the API through c,
// with c's credential.
func NewServer(c *client.Client, o Options) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "paddock", Version: o.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		SchemaCache:  o.Schemas,
	})
	t := &tools{c: c, o: o}
	t.addRuntimeTools(s)
	t.addSandboxTools(s)
	t.addHostTools(s)
	return s
}

// instructions tell a model what the server is for.
const instructions = `paddock runs durable runtimes (sandboxed Linux environments) for AI agents.
A runtime belongs to a project in a workspace of an org; tools take the org and
workspace, or use the server's defaults. Name a runtime by its id or by its
project's name. Operations inside a runtime (exec, files, preview_url, prompt)
wake a paused one; an idle one must be started first (start_runtime).`

// tools are the tool handlers, over one client.
type tools struct {
	c *client.Client
	o Options
}

// Where names the workspace a tool acts in.
type Where struct {
	Org       string `json:"org,omitempty" jsonschema:"the org's name; default: the server's default org"`
	Workspace string `json:"workspace,omitempty" jsonschema:"the workspace's name; default: the server's default workspace"`
}

// Target names one runtime.
type Target struct {
	Where
	Runtime string `json:"runtime" jsonschema:"the runtime: its id, or the name of its project"`
}

// annotations of tools, by what they do.
var (
	readOnly    = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	idempotent  = &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	additive    = &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	destructive = &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	// openWorld: what runs in a sandbox may reach anything its network
	// policy lets it.
	openWorld = &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}
)

func ptr[T any](v T) *T { return &v }

// add registers a tool whose handler takes its input and returns its
// output or an error; the error is the tool's (isError), its text
// "code: message".
func add[In, Out any](s *sdk.Server, name, title, desc string, ann *sdk.ToolAnnotations, h func(ctx context.Context, in In) (Out, error)) {
	a := *ann
	a.Title = title
	sdk.AddTool(s, &sdk.Tool{Name: name, Title: title, Description: desc, Annotations: &a},
		func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			out, err := h(ctx, in)
			if err != nil {
				var zero Out
				return nil, zero, toolError(err)
			}
			return nil, out, nil
		})
}

// codedError is a tool's own error, in the API's form: a refusal of its
// arguments before any call, or a turn that failed.
type codedError struct{ code, msg string }

func (e *codedError) Error() string { return e.code + ": " + e.msg }

// errorf is a tool's own error with a stable code.
func errorf(code, format string, args ...any) error {
	return &codedError{code: code, msg: fmt.Sprintf(format, args...)}
}

// toolError is what a tool answers for err: the API's "code: message"
// (client.Error's text), the tool's own coded errors as they are, and
// anything else (the server out of reach) as unavailable.
func toolError(err error) error {
	var ae *client.Error
	var coded *codedError
	switch {
	case errors.As(err, &ae), errors.As(err, &coded):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("canceled: %w", err)
	case errors.Is(err, client.ErrInvalidArgument):
		return fmt.Errorf("invalid_argument: %w", err)
	}
	return fmt.Errorf("unavailable: %w", err)
}

// where resolves a tool's org and workspace, defaults included.
func (t *tools) where(w Where) (org, ws string, err error) {
	org, ws = first(w.Org, t.o.Org), first(w.Workspace, t.o.Workspace)
	switch {
	case org == "":
		return "", "", errorf("missing_org", "name the org (the org argument): this server has no default org")
	case ws == "":
		return "", "", errorf("missing_workspace", "name the workspace (the workspace argument): this server has no default workspace")
	}
	return org, ws, nil
}

// runtime resolves a Target to its org, workspace and runtime id: an id
// as it is, a project's name through the project.
func (t *tools) runtime(ctx context.Context, tg Target) (org, ws, id string, err error) {
	if org, ws, err = t.where(tg.Where); err != nil {
		return "", "", "", err
	}
	switch {
	case tg.Runtime == "":
		return "", "", "", errorf("missing_runtime", "name the runtime (the runtime argument): its id or its project's name")
	case uuid.Validate(tg.Runtime) == nil:
		return org, ws, tg.Runtime, nil
	}
	p, err := t.c.GetProject(ctx, org, ws, tg.Runtime)
	if err != nil {
		return "", "", "", err
	}
	return org, ws, p.RuntimeID, nil
}

// first returns the first non-empty value.
func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
