package computeruse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// DefaultEndpoint is where serve's HTTP transport answers by default.
const DefaultEndpoint = "http://" + DefaultListen + Path

// Client is a minimal MCP client of the Streamable HTTP transport: it
// initializes, then makes requests. It reads JSON and event-stream
// answers, and keeps the session id a server may give.
type Client struct {
	HTTP     *http.Client
	Endpoint string
	Name     string // the client's name and version in initialize
	Version  string

	session  string
	protocol string
	nextID   int
}

// Initialize makes the initialize handshake.
func (c *Client) Initialize(ctx context.Context) error {
	res, err := c.Request(ctx, "initialize", map[string]any{
		"protocolVersion": ProtocolVersions[0],
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": c.Name, "version": c.Version},
	})
	if err != nil {
		return err
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if !slices.Contains(ProtocolVersions, r.ProtocolVersion) {
		return fmt.Errorf("the server speaks MCP %q, which this client does not", r.ProtocolVersion)
	}
	c.protocol = r.ProtocolVersion
	_, err = c.send(ctx, &Message{JSONRPC: "2.0", Method: "notifications/initialized"})
	return err
}

// CallTool calls a tool and returns its result as the server sent it.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return c.Request(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
}

// Request sends a request and returns its result, or its error as an
// *RPCError.
func (c *Client) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.nextID++
	id := json.RawMessage(fmt.Sprint(c.nextID))
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, &Message{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, fmt.Errorf("%s: the server sent no response", method)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// send posts one message and returns the response to it (nil for a
// notification).
func (c *Client) send(ctx context.Context, m *Message) (*Message, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.protocol != "" {
		req.Header.Set("MCP-Protocol-Version", c.protocol)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if m.ID == nil {
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s: HTTP %s", m.Method, resp.Status)
		}
		return nil, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" && resp.StatusCode == http.StatusOK {
		return readEvents(resp.Body, m.ID)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	var out Message
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: HTTP %s: %s", m.Method, resp.Status, strings.TrimSpace(string(b)))
	}
	if out.Error == nil && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", m.Method, resp.Status)
	}
	return &out, nil
}

// readEvents reads a server-sent event stream until the response with id.
func readEvents(r io.Reader, id json.RawMessage) (*Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimPrefix(v, " "))
			data.WriteByte('\n')
			continue
		}
		if line != "" || data.Len() == 0 {
			continue
		}
		var m Message
		if json.Unmarshal(data.Bytes(), &m) == nil && bytes.Equal(bytes.TrimSpace(m.ID), id) && m.Method == "" {
			return &m, nil
		}
		data.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the event stream ended without the response")
}
