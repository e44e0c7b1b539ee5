package computeruse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// The MCP server speaks the handshake revisions of the protocol
// (initialize, then requests). It keeps no session: every request stands
// alone, so a client may call tools without initializing, and many
// clients may share it. A client of the stateless revision (2026-07-28)
// that probes with server/discover gets "method not found", which sends
// it back to the initialize handshake.

// ProtocolVersions are the MCP revisions the server speaks, newest first.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ServerName is the name the server gives in initialize.
const ServerName = "paddock-computer-use"

// toolTimeout bounds one tool call.
const toolTimeout = 60 * time.Second

// Server is the MCP server: JSON-RPC messages in, responses out. Its
// transports are ServeHTTP and ServeStdio.
type Server struct {
	driver  Driver
	log     *slog.Logger
	version string
	// One tool at a time: input and screenshots happen in the order asked.
	mu sync.Mutex
}

// NewServer returns a server whose tools act through driver; version is
// the shim's, given in initialize.
func NewServer(driver Driver, log *slog.Logger, version string) *Server {
	return &Server{driver: driver, log: log, version: version}
}

// Message is a JSON-RPC 2.0 request, notification or response.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// nullID is the id of an error response to a message whose id could not
// be read.
var nullID = json.RawMessage("null")

// errorResponse is a JSON-RPC error response.
func errorResponse(id json.RawMessage, code int, format string, args ...any) *Message {
	if id == nil {
		id = nullID
	}
	return &Message{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func resultResponse(id json.RawMessage, result any) *Message {
	b, err := json.Marshal(result)
	if err != nil {
		return errorResponse(id, CodeInternalError, "encoding the result: %v", err)
	}
	return &Message{JSONRPC: "2.0", ID: id, Result: b}
}

// HandleRaw handles one JSON-RPC message or batch (an array) as read from
// a transport, and returns the response to send back: nil when there is
// none (notifications and responses only).
func (s *Server) HandleRaw(ctx context.Context, raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return encode(errorResponse(nil, CodeInvalidRequest, "empty message"))
	}
	if raw[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(raw, &batch); err != nil {
			return encode(errorResponse(nil, CodeParseError, "parse error: %v", err))
		}
		if len(batch) == 0 {
			return encode(errorResponse(nil, CodeInvalidRequest, "empty batch"))
		}
		var out []*Message
		for _, m := range batch {
			if resp := s.handle(ctx, m); resp != nil {
				out = append(out, resp)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return encode(out)
	}
	if resp := s.handle(ctx, raw); resp != nil {
		return encode(resp)
	}
	return nil
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only our own types: cannot happen
		b, _ = json.Marshal(errorResponse(nil, CodeInternalError, "encoding the response: %v", err))
	}
	return b
}

// IsParseError reports whether resp (from HandleRaw) is the answer to
// input that was not JSON.
func IsParseError(resp []byte) bool {
	var m Message
	return json.Unmarshal(resp, &m) == nil && m.Error != nil && m.Error.Code == CodeParseError
}

// handle handles one message; nil means no response.
func (s *Server) handle(ctx context.Context, raw json.RawMessage) *Message {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return errorResponse(nil, CodeParseError, "parse error: %v", err)
		}
		return errorResponse(nil, CodeInvalidRequest, "a JSON-RPC message is an object")
	}
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return errorResponse(validID(fields["id"]), CodeInvalidRequest, "invalid request: %v", err)
	}
	_, hasID := fields["id"]
	_, hasMethod := fields["method"]
	switch {
	case m.JSONRPC != "2.0":
		return errorResponse(validID(fields["id"]), CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case !hasMethod && (fields["result"] != nil || fields["error"] != nil):
		return nil // a response: the server sends no requests, so nothing waits for it
	case !hasMethod || m.Method == "":
		return errorResponse(validID(fields["id"]), CodeInvalidRequest, `invalid request: no "method"`)
	case !hasID:
		s.notification(m)
		return nil
	case validID(m.ID) == nil:
		return errorResponse(nil, CodeInvalidRequest, "invalid request: the id must be a string or a number")
	}
	return s.request(ctx, m)
}

// validID returns id when it is a string or a number, else nil.
func validID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return id
	}
	return nil
}

func (s *Server) notification(m Message) {
	switch m.Method {
	case "notifications/initialized", "notifications/cancelled":
	default:
		s.log.Debug("computer-use: notification ignored", "method", m.Method)
	}
}

func (s *Server) request(ctx context.Context, m Message) *Message {
	switch m.Method {
	case "initialize":
		return s.initialize(m)
	case "ping":
		return resultResponse(m.ID, struct{}{})
	case "tools/list":
		return resultResponse(m.ID, map[string]any{"tools": toolList})
	case "tools/call":
		return s.toolsCall(ctx, m)
	}
	return errorResponse(m.ID, CodeMethodNotFound, "method not found: %s", m.Method)
}

type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	ClientInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

// NegotiateVersion is the revision the server answers a client asking for
// requested with: the same when it speaks it, else its newest.
func NegotiateVersion(requested string) string {
	if slices.Contains(ProtocolVersions, requested) {
		return requested
	}
	return ProtocolVersions[0]
}

const instructions = "Drives the sandbox's virtual display and its Chromium browser. " +
	"Coordinates are pixels from the top left of the screen; take a screenshot to see it. " +
	"open_url opens a page in a new browser tab."

func (s *Server) initialize(m Message) *Message {
	var p initializeParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		return errorResponse(m.ID, CodeInvalidParams, "initialize: %v", err)
	}
	if p.ProtocolVersion == "" {
		return errorResponse(m.ID, CodeInvalidParams, "initialize: no protocolVersion")
	}
	v := NegotiateVersion(p.ProtocolVersion)
	s.log.Debug("computer-use: initialize", "client", p.ClientInfo.Name, "client_version", p.ClientInfo.Version, "asked", p.ProtocolVersion, "protocol", v)
	return resultResponse(m.ID, map[string]any{
		"protocolVersion": v,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": ServerName, "title": "paddock computer use", "version": s.version},
		"instructions":    instructions,
	})
}

// unmarshalParams decodes params, which must be an object when present.
func unmarshalParams(params json.RawMessage, v any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return nil
	}
	if params[0] != '{' {
		return fmt.Errorf("params must be an object")
	}
	return json.Unmarshal(params, v)
}
