package computeruse

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"strings"
)

// Tool is an MCP tool's description, as tools/list gives it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations map[string]any  `json:"annotations,omitempty"`
}

const xySchema = `"x": {"type": "integer", "minimum": 0, "description": "pixels from the left edge"},
		"y": {"type": "integer", "minimum": 0, "description": "pixels from the top edge"}`

var (
	readOnly = map[string]any{"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}
	acts     = map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}
)

// toolList is what tools/list answers.
var toolList = []Tool{
	{
		Name: "screenshot", Title: "Screenshot",
		Description: "Captures the whole screen as a PNG image.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
		Annotations: readOnly,
	},
	{
		Name: "mouse_move", Title: "Move the mouse",
		Description: "Moves the mouse pointer to x, y.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {` + xySchema + `}, "required": ["x", "y"], "additionalProperties": false}`),
		Annotations: acts,
	},
	{
		Name: "click", Title: "Click",
		Description: "Moves the mouse pointer to x, y and clicks a button (left unless told), twice when double is true.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {` + xySchema + `,
		"button": {"type": "string", "enum": ["left", "right", "middle"], "default": "left"},
		"double": {"type": "boolean", "default": false, "description": "double-click"}}, "required": ["x", "y"], "additionalProperties": false}`),
		Annotations: acts,
	},
	{
		Name: "type", Title: "Type text",
		Description: "Types text with the keyboard into whatever has the focus.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}`),
		Annotations: acts,
	},
	{
		Name: "key", Title: "Press keys",
		Description: `Presses a key or a combination in xdotool's syntax, such as "Return", "ctrl+l" or "ctrl+shift+t"; several separated by spaces are pressed one after another.`,
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"keys": {"type": "string"}}, "required": ["keys"], "additionalProperties": false}`),
		Annotations: acts,
	},
	{
		Name: "scroll", Title: "Scroll",
		Description: "Moves the mouse pointer to x, y and turns the wheel amount steps (3 unless told) in direction.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {` + xySchema + `,
		"direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
		"amount": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3}}, "required": ["x", "y", "direction"], "additionalProperties": false}`),
		Annotations: acts,
	},
	{
		Name: "cursor_position", Title: "Cursor position",
		Description: `Returns where the mouse pointer is, as "x,y".`,
		InputSchema: json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
		Annotations: readOnly,
	},
	{
		Name: "open_url", Title: "Open a URL",
		Description: "Opens url in the browser, in a new tab.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"], "additionalProperties": false}`),
		Annotations: acts,
	},
}

// Content is one MCP content block of a tool's result.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// CallResult is a tools/call result.
type CallResult struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

func textResult(format string, args ...any) CallResult {
	return CallResult{Content: []Content{{Type: "text", Text: fmt.Sprintf(format, args...)}}}
}

// toolError is a failed call's result: the model sees it and may try
// again, unlike a protocol error.
func toolError(format string, args ...any) CallResult {
	r := textResult(format, args...)
	r.IsError = true
	return r
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// toolArgs are every tool's arguments; each tool reads its own.
type toolArgs struct {
	X         *int   `json:"x"`
	Y         *int   `json:"y"`
	Button    string `json:"button"`
	Double    bool   `json:"double"`
	Text      string `json:"text"`
	Keys      string `json:"keys"`
	Direction string `json:"direction"`
	Amount    *int   `json:"amount"`
	URL       string `json:"url"`
}

func (s *Server) toolsCall(ctx context.Context, m Message) *Message {
	var p callParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		return errorResponse(m.ID, CodeInvalidParams, "tools/call: %v", err)
	}
	if !knownTool(p.Name) {
		return errorResponse(m.ID, CodeInvalidParams, "unknown tool %q", p.Name)
	}
	var a toolArgs
	if args := bytes.TrimSpace(p.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return resultResponse(m.ID, toolError("%s: invalid arguments: %v", p.Name, err))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	res := s.call(ctx, p.Name, a)
	if res.IsError {
		s.log.Info("computer-use: tool failed", "tool", p.Name, "error", res.Content[0].Text)
	}
	return resultResponse(m.ID, res)
}

func knownTool(name string) bool {
	for _, t := range toolList {
		if t.Name == name {
			return true
		}
	}
	return false
}

// call runs one tool; its failures are the result's.
func (s *Server) call(ctx context.Context, name string, a toolArgs) CallResult {
	d := s.driver
	switch name {
	case "screenshot":
		return screenshot(ctx, d)
	case "mouse_move":
		x, y, bad := a.xy(name)
		if bad != nil {
			return *bad
		}
		if err := d.MouseMove(ctx, x, y); err != nil {
			return toolError("mouse_move: %v", err)
		}
		return textResult("moved to %d,%d", x, y)
	case "click":
		return click(ctx, d, a)
	case "type":
		if a.Text == "" {
			return toolError("type needs text")
		}
		if err := d.Type(ctx, a.Text); err != nil {
			return toolError("type: %v", err)
		}
		return textResult("typed %d characters", len([]rune(a.Text)))
	case "key":
		if strings.TrimSpace(a.Keys) == "" {
			return toolError("key needs keys, such as \"ctrl+l\"")
		}
		if err := d.Key(ctx, a.Keys); err != nil {
			return toolError("key: %v", err)
		}
		return textResult("pressed %s", a.Keys)
	case "scroll":
		return scroll(ctx, d, a)
	case "cursor_position":
		x, y, err := d.CursorPosition(ctx)
		if err != nil {
			return toolError("cursor_position: %v", err)
		}
		return textResult("%d,%d", x, y)
	case "open_url":
		return openURL(ctx, d, a)
	}
	return toolError("unknown tool %q", name)
}

// xy is the point a names for tool name, or the error result when a lacks
// one or it is off the screen's top or left.
func (a toolArgs) xy(name string) (int, int, *CallResult) {
	if a.X == nil || a.Y == nil {
		r := toolError("%s needs x and y", name)
		return 0, 0, &r
	}
	if *a.X < 0 || *a.Y < 0 {
		r := toolError("%s: x and y must not be negative", name)
		return 0, 0, &r
	}
	return *a.X, *a.Y, nil
}

// screenshot answers the screenshot tool: the screen as a PNG, and its size.
func screenshot(ctx context.Context, d Driver) CallResult {
	img, err := d.Screenshot(ctx)
	if err != nil {
		return toolError("screenshot: %v", err)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return toolError("screenshot: encoding PNG: %v", err)
	}
	b := img.Bounds()
	return CallResult{Content: []Content{
		{Type: "image", Data: base64.StdEncoding.EncodeToString(buf.Bytes()), MIMEType: "image/png"},
		{Type: "text", Text: fmt.Sprintf("screenshot %dx%d", b.Dx(), b.Dy())},
	}}
}

// click answers the click tool: a's button (left by default), once or
// twice, at a's point.
func click(ctx context.Context, d Driver, a toolArgs) CallResult {
	x, y, bad := a.xy("click")
	if bad != nil {
		return *bad
	}
	button := a.Button
	if button == "" {
		button = "left"
	}
	if button != "left" && button != "right" && button != "middle" {
		return toolError("click: button %q: want left, right or middle", a.Button)
	}
	if err := d.Click(ctx, x, y, button, a.Double); err != nil {
		return toolError("click: %v", err)
	}
	what := "clicked"
	if a.Double {
		what = "double-clicked"
	}
	return textResult("%s %s at %d,%d", what, button, x, y)
}

// scroll answers the scroll tool: a's amount (3 by default) in a's
// direction at a's point.
func scroll(ctx context.Context, d Driver, a toolArgs) CallResult {
	x, y, bad := a.xy("scroll")
	if bad != nil {
		return *bad
	}
	switch a.Direction {
	case "up", "down", "left", "right":
	default:
		return toolError("scroll: direction %q: want up, down, left or right", a.Direction)
	}
	amount := 3
	if a.Amount != nil {
		amount = *a.Amount
	}
	if amount < 1 || amount > 100 {
		return toolError("scroll: amount %d: want 1 to 100", amount)
	}
	if err := d.Scroll(ctx, x, y, a.Direction, amount); err != nil {
		return toolError("scroll: %v", err)
	}
	return textResult("scrolled %s %d at %d,%d", a.Direction, amount, x, y)
}

// openURL answers the open_url tool: a's URL in the browser.
func openURL(ctx context.Context, d Driver, a toolArgs) CallResult {
	if strings.TrimSpace(a.URL) == "" {
		return toolError("open_url needs a url")
	}
	if strings.HasPrefix(a.URL, "-") {
		return toolError("open_url: %q is not a URL", a.URL)
	}
	if err := d.OpenURL(ctx, a.URL); err != nil {
		return toolError("open_url: %v", err)
	}
	return textResult("opened %s", a.URL)
}
